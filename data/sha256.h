// sha256.h: SHA-256 (FIPS 180-4), to check downloads and to fingerprint tokenizers and caches.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace sf::data {

// Incremental hashing: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();  // finishes the hash; the object is spent afterwards

 private:
  void compress(const uint8_t block[64]);
  uint32_t h_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string to_hex(const uint8_t* bytes, size_t n);
std::string sha256_hex(std::string_view data);  // 64 lowercase hex digits

}  // namespace sf::data
