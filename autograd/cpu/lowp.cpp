// lowp.cpp: rounding float32 values onto the fp16 and bf16 grids.
#include "autograd/cpu/lowp.h"

#include <cmath>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "autograd/cpu/threads.h"

namespace sf {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::fp16: return "fp16";
    case Precision::bf16: return "bf16";
    default: return "fp32";
  }
}

// The compiler's half type converts to IEEE binary16 with round-to-nearest-even, overflow to inf
// and gradual underflow: exactly the grid we emulate. GCC 12 offers it as _Float16 in C++ on
// x86-64 and as __fp16 on AArch64.
#if defined(__aarch64__)
using Half = __fp16;
#else
using Half = _Float16;
#endif

uint16_t fp16_bits(float x) {
  Half h = static_cast<Half>(x);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}
float round_to_fp16(float x) { return static_cast<float>(static_cast<Half>(x)); }

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

// dst[i] = src[i] rounded onto the grid of p (dst may equal src). fp16 uses the F16C
// instructions where the CPU has them (vcvtps2ph rounds to nearest even with subnormals, the same
// grid as the scalar _Float16 path); bf16 is integer arithmetic the compiler vectorizes.
static void round_span(const float* src, float* dst, int64_t n, Precision p) {
  int64_t i = 0;
  if (p == Precision::fp16) {
#if defined(__F16C__)
    for (; i + 8 <= n; i += 8) {
      __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
#endif
    for (; i < n; ++i) dst[i] = round_to_fp16(src[i]);
    return;
  }
  for (; i < n; ++i) {  // round_to_bf16 without branches
    uint32_t u;
    std::memcpy(&u, src + i, sizeof u);
    const bool nan = (u & 0x7FFFFFFFu) > 0x7F800000u;
    const uint32_t r = nan ? (u | 0x00400000u) : u + 0x7FFFu + ((u >> 16) & 1u);
    const uint32_t bits = r & 0xFFFF0000u;
    std::memcpy(dst + i, &bits, sizeof bits);
  }
}

static void round_into(const Tensor& src, Tensor& dst, Precision p) {
  const float* x = src.data<float>();
  float* y = dst.data<float>();
  parallel_blocks(src.numel(), [&](int64_t i0, int64_t i1) { round_span(x + i0, y + i0, i1 - i0, p); });
}

void round_inplace(Tensor& t, Precision p) {
  if (p == Precision::fp32 || t.dtype() != DType::f32) return;
  round_into(t, t, p);
}

Tensor lowp_round(Tensor t) {
  round_inplace(t, g_precision);
  return t;
}

Tensor lowp_copy(const Tensor& t) {
  if (g_precision == Precision::fp32 || t.dtype() != DType::f32) return t;
  Tensor out = Tensor::empty(t.shape(), t.dtype());
  round_into(t, out, g_precision);
  return out;
}

}  // namespace sf
