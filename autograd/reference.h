// reference.h: the formulas behind the fast kernels, written as plain xtensor expressions.
//
// Each fused kernel in autograd/cpu/ and ops_*.cpp (softmax, log-softmax + NLL, LayerNorm, GELU,
// attention, fp16/bf16 rounding) is a tuned loop over raw pointers. The functions here compute the
// same thing the way the formula reads, with no care for speed, and tests/autograd/test_reference
// checks every kernel against them. They are also what a learner can read first.
//
// Shapes: a (N, C) array holds N rows of C values; the reductions run along the last axis (C).
// Each reducer is evaluated into a container before it is broadcast (xtensor's lazy reducers give
// wrong numbers when broadcast with keep_dims: see the project's notes on xtensor).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "autograd/quiet_xsimd.h"  // before any xtensor header: see there

#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xtensor.hpp>
#include <xtensor/xvectorize.hpp>
#include <xtensor/xview.hpp>
#include <xtensor-blas/xlinalg.hpp>

namespace sf::reference {

template <class T>
using Rows = xt::xtensor<T, 2>;  // (N, C)

inline const auto kRowwise = xt::keep_dims | xt::evaluation_strategy::immediate;  // (N, 1), evaluated

// ---- softmax, log-softmax, NLL ----

// softmax(x)_j = e^(x_j - max x) / sum_k e^(x_k - max x); a row that is all -inf gives zeros.
template <class T>
Rows<T> softmax(const Rows<T>& x) {
  Rows<T> m = xt::amax(x, {1}, kRowwise);
  m = xt::where(xt::isinf(m), T(0), m);  // an all -inf row: shift by 0, every e^x is 0
  Rows<T> e = xt::exp(x - m);
  Rows<T> sum = xt::sum(e, {1}, kRowwise);
  return xt::where(sum > T(0), e / sum, T(0));
}

// log_softmax(x)_j = x_j - log sum_k e^(x_k): computed as x - max - log sum e^(x - max).
template <class T>
Rows<T> log_softmax(const Rows<T>& x) {
  Rows<T> m = xt::amax(x, {1}, kRowwise);
  Rows<T> lse = m + xt::log(xt::eval(xt::sum(xt::exp(x - m), {1}, kRowwise)));
  return x - lse;
}

// Cross-entropy from the log-softmax: mean over the rows whose target is not ignore_index of
// -(1 - eps) logp[target] - (eps / C) sum_j logp_j (eps = label smoothing, as in PyTorch).
template <class T>
double nll_loss(const Rows<T>& logp, const std::vector<int64_t>& targets, int64_t ignore_index = -100,
                double eps = 0.0) {
  double total = 0;
  int64_t kept = 0;
  const double C = static_cast<double>(logp.shape(1));
  for (size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == ignore_index) continue;
    auto row = xt::row(logp, static_cast<std::ptrdiff_t>(i));
    total += -(1 - eps) * static_cast<double>(row(static_cast<size_t>(targets[i]))) -
             eps / C * static_cast<double>(xt::sum(row)());
    ++kept;
  }
  return kept ? total / static_cast<double>(kept) : 0.0;
}

// ---- LayerNorm ----

// y = (x - mean) / sqrt(var + eps) * w + b per row; var is the biased variance.
template <class T>
Rows<T> layer_norm(const Rows<T>& x, const xt::xtensor<T, 1>& w, const xt::xtensor<T, 1>& b, double eps) {
  Rows<T> mean = xt::mean(x, {1}, kRowwise);
  Rows<T> var = xt::mean(xt::square(x - mean), {1}, kRowwise);
  return (x - mean) / xt::sqrt(var + static_cast<T>(eps)) * w + b;
}

// LayerNorm's backward, with xhat = (x - mean) rstd and g = dy * w:
//   dx = rstd (g - mean(g) - xhat mean(g xhat)),  dw = sum over rows of dy xhat,  db = sum of dy.
template <class T>
struct LayerNormBackward {
  Rows<T> dx;
  xt::xtensor<T, 1> dw, db;
};
template <class T>
LayerNormBackward<T> layer_norm_backward(const Rows<T>& x, const xt::xtensor<T, 1>& w, const Rows<T>& dy, double eps) {
  Rows<T> mean = xt::mean(x, {1}, kRowwise);
  Rows<T> var = xt::mean(xt::square(x - mean), {1}, kRowwise);
  Rows<T> rstd = T(1) / xt::sqrt(var + static_cast<T>(eps));
  Rows<T> xhat = (x - mean) * rstd;
  Rows<T> g = dy * w;
  Rows<T> mean_g = xt::mean(g, {1}, kRowwise);
  Rows<T> mean_gx = xt::mean(g * xhat, {1}, kRowwise);
  LayerNormBackward<T> r;
  r.dx = rstd * (g - mean_g - xhat * mean_gx);
  r.dw = xt::sum(dy * xhat, {0}, xt::evaluation_strategy::immediate);
  r.db = xt::sum(dy, {0}, xt::evaluation_strategy::immediate);
  return r;
}

// ---- GELU ----

// exact: x Phi(x) with Phi(x) = (1 + erf(x / sqrt 2)) / 2;  d/dx = Phi(x) + x phi(x).
// tanh form: x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2.
template <class T>
xt::xarray<T> gelu(const xt::xarray<T>& x, bool tanh_form = false) {
  const T k = static_cast<T>(std::sqrt(2.0 / M_PI));
  if (tanh_form) return T(0.5) * x * (T(1) + xt::tanh(k * (x + T(0.044715) * x * x * x)));
  return T(0.5) * x * (T(1) + xt::erf(x / static_cast<T>(std::sqrt(2.0))));
}
template <class T>
xt::xarray<T> gelu_grad(const xt::xarray<T>& x, bool tanh_form = false) {
  const T k = static_cast<T>(std::sqrt(2.0 / M_PI));
  if (tanh_form) {
    xt::xarray<T> t = xt::tanh(k * (x + T(0.044715) * x * x * x));
    return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * k * (T(1) + T(3 * 0.044715) * x * x);
  }
  xt::xarray<T> cdf = T(0.5) * (T(1) + xt::erf(x / static_cast<T>(std::sqrt(2.0))));
  return cdf + x * xt::exp(T(-0.5) * x * x) / static_cast<T>(std::sqrt(2.0 * M_PI));
}

// ---- linear + GELU ----

// y = gelu(x W^T + b) for x (N, in), W (out, in), b (out). Backward, given dy (N, out), with
// dpre = dy * gelu'(x W^T + b):  dx = dpre W,  dW = dpre^T x,  db = the sum of dpre over rows.
template <class T>
struct LinearGelu {
  Rows<T> y, dx, dw;
  xt::xtensor<T, 1> db;
};
template <class T>
LinearGelu<T> linear_gelu(const Rows<T>& x, const Rows<T>& w, const xt::xtensor<T, 1>& b, const Rows<T>& dy,
                          bool tanh_form) {
  const Rows<T> wt = xt::transpose(w);  // (in, out)
  const Rows<T> product = xt::linalg::dot(x, wt);
  const Rows<T> pre = product + b;  // (N, out)
  const Rows<T> grad = gelu_grad(xt::xarray<T>(pre), tanh_form);
  const Rows<T> dpre = dy * grad;
  const Rows<T> dpre_t = xt::transpose(dpre);  // (out, N)
  LinearGelu<T> r;
  r.y = gelu(xt::xarray<T>(pre), tanh_form);
  r.dx = xt::linalg::dot(dpre, w);
  r.dw = xt::linalg::dot(dpre_t, x);
  r.db = xt::sum(dpre, {0}, xt::evaluation_strategy::immediate);
  return r;
}

// ---- attention ----

// One (batch, head) slice: q (T, D), k and v (S, D) -> softmax(q k^T * scale + mask) v, (T, D).
// causal: query t sits at absolute position S - T + t and sees keys s <= that position;
// window > 0: additionally only keys s > position - window. Returns the probabilities in `p`.
template <class T>
Rows<T> attention(const Rows<T>& q, const Rows<T>& k, const Rows<T>& v, bool causal, int64_t window, double scale,
                  Rows<T>* p = nullptr) {
  const auto Tq = static_cast<int64_t>(q.shape(0)), S = static_cast<int64_t>(k.shape(0));
  Rows<T> scores = xt::linalg::dot(q, xt::transpose(k)) * static_cast<T>(scale);  // (T, S)
  for (int64_t t = 0; t < Tq; ++t) {
    const int64_t position = S - Tq + t;
    for (int64_t s = 0; s < S; ++s) {
      bool hidden = (causal && s > position) || (window > 0 && s <= position - window);
      if (hidden) scores(t, s) = -std::numeric_limits<T>::infinity();
    }
  }
  Rows<T> probs = softmax(scores);
  if (p) *p = probs;
  return xt::linalg::dot(probs, v);
}

// ---- fp16 / bf16 rounding ----

// x rounded to the nearest value of a binary floating-point grid with `bits` significant bits
// (the hidden one included), exponents down to `min_exponent` (below it the spacing stays
// 2^(min_exponent - bits + 1): subnormals) and largest finite value `max_finite` (beyond it,
// infinity). Nearest, ties to even, as IEEE 754 rounds. Done in double, where x / spacing is exact.
inline float round_to_grid(float x, int bits, int min_exponent, double max_finite) {
  if (!std::isfinite(x) || x == 0.0f) return x;
  const double xd = x;
  const int exponent = std::max(std::ilogb(xd), min_exponent);  // floor(log2 |x|), at least the minimum
  const double spacing = std::ldexp(1.0, exponent - (bits - 1));
  const double r = std::nearbyint(xd / spacing) * spacing;  // the default rounding mode: ties to even
  if (std::fabs(r) > max_finite) return std::copysign(std::numeric_limits<float>::infinity(), x);
  return static_cast<float>(r);
}

// IEEE binary16: 11 significant bits, normal exponents from -14, largest 65504.
inline float round_fp16(float x) { return round_to_grid(x, 11, -14, 65504.0); }
// bfloat16: float32's exponent range with 8 significant bits; largest (2 - 2^-7) 2^127.
inline float round_bf16(float x) { return round_to_grid(x, 8, -126, std::ldexp(2.0 - std::ldexp(1.0, -7), 127)); }

// The same, elementwise over an array.
inline xt::xarray<float> round_fp16(const xt::xarray<float>& x) {
  return xt::vectorize(static_cast<float (*)(float)>(round_fp16))(x);
}
inline xt::xarray<float> round_bf16(const xt::xarray<float>& x) {
  return xt::vectorize(static_cast<float (*)(float)>(round_bf16))(x);
}

}  // namespace sf::reference
