// gelu.h: the GELU row kernels shared by gelu() (ops_elementwise.cpp) and the fused linear_gelu()
// (ops_matmul.cpp), on raw pointers. The plain formula they are tested against is
// reference::gelu / reference::gelu_grad in autograd/reference.h.
//
// exact: x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, d/dx = Phi(x) + x phi(x).
// tanh form: 0.5 x (1 + tanh u), u = sqrt(2/pi) (x + 0.044715 x^3).
//
// The loops run in xsimd batches with a scalar tail (xsimd's tanh/erf are within about an ulp of
// libm's, not bit-equal). So that a value gets the same bits however the work is cut, callers
// start every piece at a multiple of the SIMD width: then only the array's own last n mod W
// elements take the scalar path.
#pragma once
#include <cmath>
#include <cstdint>

#include "autograd/cpu/simd.h"

namespace sf::kernels {

// Written once for scalars and xsimd batches (V is float, double or a batch of them). Both
// directions start from the same function of x, e = tanh u (tanh form) or erf(x / sqrt 2), so that
// one e per value can give both (gelu_forward_and_slope) with the bits of each alone.
template <class V>
V gelu_e(V x, bool tanh_form) {
  using std::erf, std::tanh;
  if (tanh_form) return tanh(V(0.7978845608028654) * (x + V(0.044715) * x * x * x));
  return erf(x * V(0.7071067811865476));
}
// gelu(x) from e: 0.5 x (1 + e) in both forms.
template <class V>
V gelu_from_e(V x, V e) {
  return V(0.5) * x * (V(1) + e);
}
// gelu'(x) from e.
template <class V>
V gelu_grad_from_e(V x, V e, bool tanh_form) {
  using std::exp;
  if (tanh_form) {
    V k(0.7978845608028654), x2 = x * x;
    return V(0.5) * (V(1) + e) + V(0.5) * x * (V(1) - e * e) * k * (V(1) + V(3 * 0.044715) * x2);
  }
  V cdf = V(0.5) * (V(1) + e);
  return cdf + x * V(0.3989422804014327) * exp(V(-0.5) * x * x);
}
template <class V>
V gelu_value(V x, bool tanh_form) {
  return gelu_from_e(x, gelu_e(x, tanh_form));
}
template <class V>
V gelu_grad(V x, bool tanh_form) {
  return gelu_grad_from_e(x, gelu_e(x, tanh_form), tanh_form);
}

// y[i] = gelu(x[i]) for i in [0, n)
template <class T>
void gelu_forward(const T* x, T* y, int64_t n, bool tanh_form) {
  simd::map(x, y, n, [tanh_form](auto v) { return gelu_value(v, tanh_form); });
}

// dx[i] = dy[i] * gelu'(x[i]) for i in [0, n)
template <class T>
void gelu_backward(const T* dy, const T* x, T* dx, int64_t n, bool tanh_form) {
  simd::map2(dy, x, dx, n, [tanh_form](auto gv, auto xv) { return gv * gelu_grad(xv, tanh_form); });
}

// y[i] = gelu(x[i]) and slope[i] = gelu'(x[i]) for i in [0, n), one e per value: the bits of
// gelu_forward and of gelu_grad. slope may be x itself (each value is read before it is written).
template <class T>
void gelu_forward_and_slope(const T* x, T* y, T* slope, int64_t n, bool tanh_form) {
  using B = xsimd::batch<T>;
  constexpr int64_t W = B::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    const B v = B::load_unaligned(x + i), e = gelu_e(v, tanh_form);
    gelu_from_e(v, e).store_unaligned(y + i);
    gelu_grad_from_e(v, e, tanh_form).store_unaligned(slope + i);
  }
  for (; i < n; ++i) {
    const T v = x[i], e = gelu_e(v, tanh_form);
    y[i] = gelu_from_e(v, e);
    slope[i] = gelu_grad_from_e(v, e, tanh_form);
  }
}

}  // namespace sf::kernels
