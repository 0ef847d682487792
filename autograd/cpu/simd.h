// simd.h: the few vectorized row kernels the hot ops share (xsimd, no -ffast-math needed).
// xsimd's exp/tanh/erf are within about 1 ulp of libm and 5-10x faster than a scalar loop.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "autograd/quiet_xsimd.h"

// xsimd::batch<T> is a vector of the widest instruction set the build's flags enable: AVX-512,
// AVX2 or SSE on x86-64, NEON (128 bits: 4 floats, 2 doubles) on ARM64. An ARM64 build must get
// NEON, never xsimd's one-lane fallback (nothing else to enable there: NEON is part of ARMv8-A).
#if defined(__aarch64__)
static_assert(std::is_same_v<xsimd::default_arch, xsimd::neon64>, "ARM64: xsimd's kernels must use NEON (neon64)");
#endif

namespace sf::simd {

// Lane i of a swizzle takes lane (i + Shift) mod W: a rotation by Shift lanes.
template <unsigned Shift>
struct RotateLanes {
  static constexpr unsigned get(unsigned i, unsigned n) { return (i + Shift) % n; }
};

// Every lane of the result holds the largest lane of v: the lanes are folded in halves (rotate by
// W/2 and take the max, then by W/4, ...), log2(W) steps in registers.
template <class T, class A, unsigned Shift = xsimd::batch<T, A>::size / 2>
inline xsimd::batch<T, A> fold_max(xsimd::batch<T, A> v) {
  if constexpr (Shift == 0) {
    return v;
  } else {
    using Index = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    const auto rotate = xsimd::make_batch_constant<xsimd::batch<Index, A>, RotateLanes<Shift>>();
    return fold_max<T, A, Shift / 2>(xsimd::max(v, xsimd::swizzle(v, rotate)));
  }
}

// max of x[0..n)
template <class T>
inline T row_max(const T* x, int64_t n) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  T m = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  if (n >= W) {
    B acc = B::load_unaligned(x);
    for (i = W; i + W <= n; i += W) acc = xsimd::max(acc, B::load_unaligned(x + i));
    // xsimd 8 has no horizontal max. std::max_element over the stored lanes (a chain of W compares
    // and branches) made tiny's training steps 2.6% slower than this fold (bench/README.md).
    m = fold_max(acc).get(0);
  }
  for (; i < n; ++i) m = std::max(m, x[i]);
  return m;
}

// x[i] = value for i in [from, to), where `to` is `from` rounded up to a whole vector (W values
// from a multiple of W): done as one vector store of that whole vector, its lanes below `from`
// kept. A vector load of it right after is then served from the store buffer; after W scalar
// stores it would wait for them to reach the cache. Any other `to` is filled value by value.
template <class T>
inline void fill_vector_tail(T* x, int64_t from, int64_t to, T value) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  const int64_t v0 = from / W * W;
  if (from >= to) return;
  if (to != v0 + W) {
    std::fill(x + from, x + to, value);
    return;
  }
  alignas(64) static constexpr struct Iota {  // lane numbers 0, 1, ..., W - 1
    T v[W];
    constexpr Iota() : v{} {
      for (int64_t i = 0; i < W; ++i) v[i] = T(i);
    }
  } iota;
  const auto below = B::load_aligned(iota.v) < B(T(from - v0));
  xsimd::select(below, B::load_unaligned(x + v0), B(value)).store_unaligned(x + v0);
}

// y[i] = exp(x[i] - m); returns the sum of the y[i] (x and y may alias).
//
// In double, xsimd 8's exp converts x / ln 2 to int64 one element at a time in C++ on SSE2 and
// AVX2, and in a native build on a Zen 4 too (its avx512bw path), where converting -inf or NaN is
// undefined. So arguments below -1000 (a masked -inf above all) go in as -1000, whose exp is 0 as
// exp(-inf) is (every result keeps its bits), and a NaN goes in as -1000 too and is put back in
// the result. Float converts with an instruction.
template <class T>
inline T exp_shifted(const T* x, T* y, int64_t n, T m) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  B bm(m), acc(T(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const B shifted = B::load_unaligned(x + i) - bm;
    B e;
    if constexpr (std::is_same_v<T, double>) {
      const auto nan = xsimd::isnan(shifted);
      e = xsimd::exp(xsimd::select(nan | (shifted < B(-1000.0)), B(-1000.0), shifted));
      e = xsimd::select(nan, shifted, e);
    } else {
      e = xsimd::exp(shifted);
    }
    e.store_unaligned(y + i);
    acc += e;
  }
  T total = xsimd::hadd(acc);
  for (; i < n; ++i) total += (y[i] = std::exp(x[i] - m));
  return total;
}

// x[i] *= s
template <class T>
inline void scale(T* x, int64_t n, T s) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  B bs(s);
  int64_t i = 0;
  for (; i + W <= n; i += W) (B::load_unaligned(x + i) * bs).store_unaligned(x + i);
  for (; i < n; ++i) x[i] *= s;
}

// sum of a[i] * b[i]
template <class T>
inline T dot(const T* a, const T* b, int64_t n) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  B acc(T(0));
  int64_t i = 0;
  for (; i + W <= n; i += W) acc = xsimd::fma(B::load_unaligned(a + i), B::load_unaligned(b + i), acc);
  T total = xsimd::hadd(acc);
  for (; i < n; ++i) total += a[i] * b[i];
  return total;
}

// y[i] = f(x[i]) with f a generic lambda that works on both T and xsimd::batch<T>
// (call math functions unqualified after `using std::exp;` so batches find xsimd's by ADL).
template <class T, class F>
inline void map(const T* x, T* y, int64_t n, F f) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) f(B::load_unaligned(x + i)).store_unaligned(y + i);
  for (; i < n; ++i) y[i] = f(x[i]);
}

// z[i] = f(x[i], y[i]), as map.
template <class T, class F>
inline void map2(const T* x, const T* y, T* z, int64_t n, F f) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) f(B::load_unaligned(x + i), B::load_unaligned(y + i)).store_unaligned(z + i);
  for (; i < n; ++i) z[i] = f(x[i], y[i]);
}

// In-place softmax of one contiguous row; a row that is all -inf (fully masked) becomes zeros.
template <class T>
inline void softmax_row(T* x, int64_t n) {
  T m = row_max(x, n);
  if (m == -std::numeric_limits<T>::infinity()) {  // every entry masked: zeros, unless one is NaN
    // (row_max may pass over a NaN, so [NaN] or [NaN, -inf] can land here; a NaN logit must not
    // vanish into a row of zeros, where it would hide a diverged run)
    const bool any_nan = std::any_of(x, x + n, [](T v) { return std::isnan(v); });
    std::fill(x, x + n, any_nan ? std::numeric_limits<T>::quiet_NaN() : T(0));
    return;
  }
  T total = exp_shifted(x, x, n, m);
  scale(x, n, T(1) / total);
}

}  // namespace sf::simd
