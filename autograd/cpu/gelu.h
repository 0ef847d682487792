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

// Written once for scalars and xsimd batches (V is float, double or a batch of them).
template <class V>
V gelu_value(V x, bool tanh_form) {
  using std::erf, std::tanh;
  if (tanh_form) return V(0.5) * x * (V(1) + tanh(V(0.7978845608028654) * (x + V(0.044715) * x * x * x)));
  return V(0.5) * x * (V(1) + erf(x * V(0.7071067811865476)));
}
template <class V>
V gelu_grad(V x, bool tanh_form) {
  using std::erf, std::exp, std::tanh;
  if (tanh_form) {
    V k(0.7978845608028654), x2 = x * x;
    V t = tanh(k * (x + V(0.044715) * x2 * x));
    return V(0.5) * (V(1) + t) + V(0.5) * x * (V(1) - t * t) * k * (V(1) + V(3 * 0.044715) * x2);
  }
  V cdf = V(0.5) * (V(1) + erf(x * V(0.7071067811865476)));
  return cdf + x * V(0.3989422804014327) * exp(V(-0.5) * x * x);
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

}  // namespace sf::kernels
