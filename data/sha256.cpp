// sha256.cpp: SHA-256 through OpenSSL's EVP digest interface.
#include "data/sha256.h"

#include <stdexcept>

#include <openssl/evp.h>

namespace sf::data {

struct Sha256::Context {
  EVP_MD_CTX* md = nullptr;
};

// OpenSSL reports failure only for internal reasons (out of memory, a broken provider): an
// internal error here, never a user's.
static void require(int ok, const char* what) {
  if (ok != 1) throw std::runtime_error(std::string("sha256: OpenSSL ") + what + " failed");
}

Sha256::Sha256() : ctx_(std::make_unique<Context>()) {
  ctx_->md = EVP_MD_CTX_new();
  if (!ctx_->md) throw std::runtime_error("sha256: OpenSSL EVP_MD_CTX_new failed");
  require(EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx_->md); }

void Sha256::update(const void* data, size_t n) {
  if (n) require(EVP_DigestUpdate(ctx_->md, data, n), "EVP_DigestUpdate");
}

std::array<uint8_t, 32> Sha256::digest() {
  std::array<uint8_t, 32> out{};
  unsigned int length = 0;
  require(EVP_DigestFinal_ex(ctx_->md, out.data(), &length), "EVP_DigestFinal_ex");
  if (length != out.size()) throw std::runtime_error("sha256: OpenSSL returned a digest of unexpected length");
  return out;
}

std::string to_hex(const uint8_t* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

std::string sha256_hex(std::string_view data) {
  Sha256 h;
  h.update(data);
  auto d = h.digest();
  return to_hex(d.data(), d.size());
}

}  // namespace sf::data
