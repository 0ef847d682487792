// sha256.h: SHA-256, to check downloads and the shipped corpus and to fingerprint tokenizers,
// token caches and run records. The hashing itself is OpenSSL's (libcrypto's EVP interface):
// a well-kept implementation is better than one of our own for a checksum users rely on.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace sf::data {

// Incremental hashing: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::array<uint8_t, 32> digest();  // finishes the hash; the object is spent afterwards

 private:
  struct Context;  // OpenSSL's EVP_MD_CTX, kept out of this header
  std::unique_ptr<Context> ctx_;
};

std::string to_hex(const uint8_t* bytes, size_t n);
std::string sha256_hex(std::string_view data);  // 64 lowercase hex digits

}  // namespace sf::data
