// rows.h: the row kernels of the fused ops in ops_nn.cpp (softmax, LayerNorm), on raw pointers.
// Each is checked against its plain formula in autograd/reference.h (tests/autograd/test_reference).
// The LayerNorm rows are vectorized with xsimd; each sum runs in the lanes of one SIMD register
// and is added up across the lanes at the end, so a row's result depends on C only.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "autograd/cpu/simd.h"
#include "autograd/tensor.h"

namespace sf::kernels {

// A tensor seen as (outer, n, inner) around `axis`: row (o, i) has n elements at stride inner.
struct Rows {
  int64_t outer = 1, n = 1, inner = 1;
  Rows(const Shape& shape, int64_t axis) {
    n = shape[axis];
    for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
    for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
  }
  int64_t count() const { return outer * inner; }
  int64_t base(int64_t r) const { return (r / inner) * n * inner + r % inner; }
};

// ---- softmax rows ----
// y = e^(x - max) / sum e^(x - max). A row that is entirely -inf (fully masked) gives zeros; a
// row with a NaN gives NaN (std::max passes over it, so a NaN among -inf is looked for).
template <class T>
inline void softmax_forward(const T* x, T* y, const Rows& rows) {
  if (rows.inner == 1) {  // contiguous rows: the vectorized kernel
    for (int64_t r = 0; r < rows.outer; ++r) {
      std::copy(x + r * rows.n, x + (r + 1) * rows.n, y + r * rows.n);
      simd::softmax_row(y + r * rows.n, rows.n);
    }
    return;
  }
  for (int64_t r = 0; r < rows.count(); ++r) {
    const T* xr = x + rows.base(r);
    T* yr = y + rows.base(r);
    int64_t s = rows.inner;
    T m = -std::numeric_limits<T>::infinity();
    for (int64_t j = 0; j < rows.n; ++j) m = std::max(m, xr[j * s]);
    if (m == -std::numeric_limits<T>::infinity()) {
      bool any_nan = false;
      for (int64_t j = 0; j < rows.n; ++j) any_nan = any_nan || std::isnan(xr[j * s]);
      for (int64_t j = 0; j < rows.n; ++j) yr[j * s] = any_nan ? std::numeric_limits<T>::quiet_NaN() : T(0);
      continue;
    }
    T total = 0;
    for (int64_t j = 0; j < rows.n; ++j) total += (yr[j * s] = std::exp(xr[j * s] - m));
    T inv = 1 / total;
    for (int64_t j = 0; j < rows.n; ++j) yr[j * s] *= inv;
  }
}
// dx = y * (dy - sum(dy * y))
template <class T>
inline void softmax_backward(const T* y, const T* dy, T* dx, const Rows& rows) {
  for (int64_t r = 0; r < rows.count(); ++r) {
    int64_t b = rows.base(r), s = rows.inner;
    T dot = 0;
    for (int64_t j = 0; j < rows.n; ++j) dot += dy[b + j * s] * y[b + j * s];
    for (int64_t j = 0; j < rows.n; ++j) dx[b + j * s] = y[b + j * s] * (dy[b + j * s] - dot);
  }
}

// ---- LayerNorm rows ----
// A missing weight or bias (nullptr) reads as ones or zeros.
// One row forward: writes y, returns {mean, rstd}. The variance takes a second pass over
// (x - mean)^2, which stays accurate for rows with a large mean (a test checks a mean of 1000).
template <class T>
inline std::pair<T, T> layer_norm_row(const T* x, T* y, int64_t C, const T* w, const T* b, double eps) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  const int64_t vec_end = C / W * W;
  B acc(T(0));
  for (int64_t j = 0; j < vec_end; j += W) acc += B::load_unaligned(x + j);
  T s = xsimd::hadd(acc);
  for (int64_t j = vec_end; j < C; ++j) s += x[j];
  const T mean = s / static_cast<T>(C);
  B bm(mean);
  acc = B(T(0));
  for (int64_t j = 0; j < vec_end; j += W) {
    B d = B::load_unaligned(x + j) - bm;
    acc = xsimd::fma(d, d, acc);
  }
  T var = xsimd::hadd(acc);
  for (int64_t j = vec_end; j < C; ++j) var += (x[j] - mean) * (x[j] - mean);
  var /= static_cast<T>(C);
  const T rstd = static_cast<T>(1.0 / std::sqrt(static_cast<double>(var) + eps));
  B br(rstd);
  for (int64_t j = 0; j < vec_end; j += W) {
    B v = (B::load_unaligned(x + j) - bm) * br;
    if (w) v *= B::load_unaligned(w + j);
    if (b) v += B::load_unaligned(b + j);
    v.store_unaligned(y + j);
  }
  for (int64_t j = vec_end; j < C; ++j) {
    T v = (x[j] - mean) * rstd;
    y[j] = (w ? v * w[j] : v) + (b ? b[j] : T(0));
  }
  return {mean, rstd};
}

// One row backward: adds dy * xhat to pw and dy to pb (this block's partial dw, db) and, when dx
// is not null, writes the row of dx.
template <class T>
inline void layer_norm_row_backward(const T* x, const T* dy, int64_t C, T mean, T rstd, const T* w, T* pw, T* pb,
                                    T* dx) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  const int64_t vec_end = C / W * W;
  const B bm(mean), br(rstd);
  B acc_g(T(0)), acc_gx(T(0));
  for (int64_t j = 0; j < vec_end; j += W) {
    B xhat = (B::load_unaligned(x + j) - bm) * br, d = B::load_unaligned(dy + j);
    B g = w ? d * B::load_unaligned(w + j) : d;
    acc_g += g;
    acc_gx = xsimd::fma(g, xhat, acc_gx);
    xsimd::fma(d, xhat, B::load_unaligned(pw + j)).store_unaligned(pw + j);
    (B::load_unaligned(pb + j) + d).store_unaligned(pb + j);
  }
  T sum_g = xsimd::hadd(acc_g), sum_gx = xsimd::hadd(acc_gx);
  for (int64_t j = vec_end; j < C; ++j) {
    T xhat = (x[j] - mean) * rstd, g = w ? dy[j] * w[j] : dy[j];
    sum_g += g;
    sum_gx += g * xhat;
    pw[j] += dy[j] * xhat;
    pb[j] += dy[j];
  }
  if (!dx) return;
  const T mean_g = sum_g / static_cast<T>(C), mean_gx = sum_gx / static_cast<T>(C);
  const B bg(mean_g), bgx(mean_gx);
  for (int64_t j = 0; j < vec_end; j += W) {
    B xhat = (B::load_unaligned(x + j) - bm) * br, d = B::load_unaligned(dy + j);
    B g = w ? d * B::load_unaligned(w + j) : d;
    (br * (g - bg - xhat * bgx)).store_unaligned(dx + j);
  }
  for (int64_t j = vec_end; j < C; ++j) {
    T xhat = (x[j] - mean) * rstd, g = w ? dy[j] * w[j] : dy[j];
    dx[j] = rstd * (g - mean_g - xhat * mean_gx);
  }
}

}  // namespace sf::kernels
