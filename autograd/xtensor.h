// xtensor.h: look at any Tensor with xtensor's NumPy-like expressions, and turn an expression
// back into a Tensor, without copying the tensor's data.
//
//   Tensor w = ...;                             // a parameter, a gradient, an activation
//   auto x = sf::as_xtensor<float>(w);           // an xtensor view over w's buffer (no copy)
//   double m = xt::amax(xt::abs(x))();           // read it like NumPy: np.abs(w).max()
//   x *= 0.5f;                                   // writes go straight into w
//   Tensor r = sf::to_tensor(xt::tanh(x) + 1.f); // an expression evaluated into a new Tensor
//
// The view is only valid while the tensor's buffer lives (keep the Tensor handle around), and it
// is not part of the graph: use it for reading, for references in tests and for lesson math, not
// in place of the differentiable ops in ops.h. xtensor is a heavy header; include this file only
// where you use it.
#pragma once
#include <cstddef>
#include <type_traits>
#include <vector>

#include "autograd/quiet_xsimd.h"  // before any xtensor header: see there

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include "autograd/tensor.h"

namespace sf {

namespace detail {
inline std::vector<size_t> xt_shape(const Tensor& t) {
  std::vector<size_t> shape;
  for (int64_t d : t.shape()) shape.push_back(static_cast<size_t>(d));
  return shape;
}
}  // namespace detail

// An xtensor view (xt::adapt) of t's elements, row-major, of t's shape. T must be t's dtype
// (float for float32, double for float64); a mismatch throws ShapeError.
template <class T>
auto as_xtensor(Tensor& t) {
  return xt::adapt(t.data<T>(), static_cast<size_t>(t.numel()), xt::no_ownership(), detail::xt_shape(t));
}

// The same view, read-only.
template <class T>
auto as_xtensor(const Tensor& t) {
  return xt::adapt(t.data<T>(), static_cast<size_t>(t.numel()), xt::no_ownership(), detail::xt_shape(t));
}

// Evaluates an xtensor expression of float or double straight into a new Tensor (float32 or
// float64) of the expression's shape: the only copy is the evaluation itself.
template <class E>
Tensor to_tensor(const xt::xexpression<E>& expression) {
  const E& e = expression.derived_cast();
  using T = std::decay_t<typename E::value_type>;
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "to_tensor: the expression must hold float or double");
  Shape shape;
  for (auto d : e.shape()) shape.push_back(static_cast<int64_t>(d));
  Tensor out = Tensor::empty(shape, dtype_of<T>());
  auto view = as_xtensor<T>(out);
  view = e;
  return out;
}

}  // namespace sf
