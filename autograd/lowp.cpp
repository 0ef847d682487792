// lowp.cpp: rounding float32 values onto the fp16 and bf16 grids.
#include "autograd/lowp.h"

#include <cmath>
#include <cstring>

namespace sf {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    default: return "fp32";
  }
}

// GCC's _Float16 conversion is IEEE binary16 with round-to-nearest-even, overflow to inf
// and gradual underflow: exactly the grid we emulate.
uint16_t fp16_bits(float x) {
  _Float16 h = static_cast<_Float16>(x);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}
float round_to_fp16(float x) { return static_cast<float>(static_cast<_Float16>(x)); }

// bf16 is the top half of a float32: add half of the dropped part (rounding ties to the even
// kept bit), then drop the low 16 bits. Carries into the exponent give the next binade or inf.
uint16_t bf16_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if (std::isnan(x)) return static_cast<uint16_t>((u >> 16) | 0x0040);  // keep it a quiet NaN
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
float round_to_bf16(float x) {
  uint32_t u = static_cast<uint32_t>(bf16_bits(x)) << 16;
  float y;
  std::memcpy(&y, &u, sizeof y);
  return y;
}

static thread_local Precision g_precision = Precision::fp32;
Precision autocast_precision() { return g_precision; }
AutocastGuard::AutocastGuard(Precision p) : previous_(g_precision) { g_precision = p; }
AutocastGuard::~AutocastGuard() { g_precision = previous_; }

void round_inplace(Tensor& t, Precision p) {
  if (p == Precision::fp32 || t.dtype() != DType::f32) return;
  float* x = t.data<float>();
  int64_t n = t.numel();
  if (p == Precision::fp16) {
    for (int64_t i = 0; i < n; ++i) x[i] = round_to_fp16(x[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) x[i] = round_to_bf16(x[i]);
  }
}

Tensor lowp_round(Tensor t) {
  round_inplace(t, g_precision);
  return t;
}

}  // namespace sf
