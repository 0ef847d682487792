// torch_generator.cpp: PyTorch's CPU generator (see the header for what each draw does).
#include "autograd/torch_generator.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

#include "autograd/errors.h"

namespace sf {

TorchGenerator::TorchGenerator(uint64_t seed) : engine_(static_cast<uint32_t>(seed)) {}

uint64_t TorchGenerator::random64() {
  const uint64_t hi = engine_(), lo = engine_();
  return (hi << 32) | lo;
}

int64_t TorchGenerator::randint(int64_t n) {
  if (n <= 0) throw Error("TorchGenerator::randint: n must be positive, got " + std::to_string(n));
  const uint64_t range = static_cast<uint64_t>(n);
  const uint64_t r = range >= (1ull << 32) ? random64() : random();
  return static_cast<int64_t>(r % range);
}

float TorchGenerator::uniform01() {
  return static_cast<float>(static_cast<double>(random() & ((1u << 24) - 1)) * 0x1.0p-24);
}

double TorchGenerator::uniform01_double() { return static_cast<double>(random64() & ((1ull << 53) - 1)) * 0x1.0p-53; }

void TorchGenerator::uniform_(float* x, int64_t n, double from, double to) {
  for (int64_t i = 0; i < n; ++i)  // the 24-bit uniform is exact in float, the affine map in double
    x[i] = static_cast<float>(static_cast<double>(uniform01()) * (to - from) + from);
}

// One Box-Muller pair per (j, j + 8) in a block of 16 uniforms, in float as PyTorch does.
static void box_muller_16(float* d, float mean, float stddev) {
  for (int j = 0; j < 8; ++j) {
    const float u1 = 1.0f - d[j];  // (0, 1]: log(u1) is finite
    const float u2 = d[j + 8];
    const float radius = std::sqrt(-2.0f * std::log(u1));
    const float theta = 2.0f * static_cast<float>(M_PI) * u2;
    d[j] = radius * std::cos(theta) * stddev + mean;
    d[j + 8] = radius * std::sin(theta) * stddev + mean;
  }
}

double TorchGenerator::scalar_normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = uniform01_double(), u2 = uniform01_double();
  const double radius = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * M_PI * u1;
  spare_ = radius * std::sin(theta);
  has_spare_ = true;
  return radius * std::cos(theta);
}

void TorchGenerator::normal_(float* x, int64_t n, double mean, double stddev) {
  if (n < 16) {
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(scalar_normal() * stddev + mean);
    return;
  }
  const float m = static_cast<float>(mean), s = static_cast<float>(stddev);
  for (int64_t i = 0; i < n; ++i) x[i] = uniform01();
  for (int64_t i = 0; i + 16 <= n; i += 16) box_muller_16(x + i, m, s);
  if (n % 16 != 0) {  // the last 16 elements again, from fresh uniforms
    float* tail = x + n - 16;
    for (int i = 0; i < 16; ++i) tail[i] = uniform01();
    box_muller_16(tail, m, s);
  }
}

std::string TorchGenerator::state() const {
  std::ostringstream out;
  uint64_t spare_bits;
  std::memcpy(&spare_bits, &spare_, sizeof spare_bits);
  out << engine_ << ' ' << (has_spare_ ? 1 : 0) << ' ' << spare_bits;
  return out.str();
}

void TorchGenerator::set_state(const std::string& s) {
  // Checked number by number: the stream operator of std::mt19937 would take any value.
  auto bad = [] {
    return Error(
        "TorchGenerator: malformed state (expected 624 32-bit words, a position <= 624, "
        "a 0/1 flag and the cached normal's bits)");
  };
  std::istringstream in(s);
  std::vector<uint64_t> v;
  std::string token;
  while (in >> token) {
    if (token.empty() || token.size() > 20 || token.find_first_not_of("0123456789") != std::string::npos) throw bad();
    errno = 0;
    const unsigned long long x = std::strtoull(token.c_str(), nullptr, 10);
    if (errno == ERANGE) throw bad();
    v.push_back(x);
  }
  const size_t n = std::mt19937::state_size;
  if (v.size() != n + 3 || v[n] > n || v[n + 1] > 1) throw bad();
  for (size_t i = 0; i < n; ++i)
    if (v[i] > 0xffffffffull) throw bad();
  std::ostringstream words;
  for (size_t i = 0; i <= n; ++i) words << v[i] << ' ';
  std::istringstream engine_in(words.str());
  engine_in >> engine_;
  has_spare_ = v[n + 1] == 1;
  std::memcpy(&spare_, &v[n + 2], sizeof spare_);
}

}  // namespace sf
