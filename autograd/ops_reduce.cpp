// ops_reduce.cpp: sum, mean and max over axes, and the two halves of broadcasting:
// expand (copy up to a larger shape) and sum_to (sum back down), each the other's backward.
#include <algorithm>
#include <limits>

#include "autograd/graph.h"
#include "autograd/cpu/kernels.h"
#include "autograd/ops.h"

namespace sf {

// The shape of `in` with `axes` kept as size 1, after validating and de-duplicating them.
static Shape keepdim_shape(const Shape& in, const std::vector<int64_t>& axes, const char* op) {
  Shape out = in;
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> seen(in.size(), false);
  for (int64_t axis : axes) {
    int64_t a = normalize_axis(axis, rank, op);
    if (seen[a]) throw ShapeError(std::string(op) + ": axis " + std::to_string(axis) + " repeated");
    seen[a] = true;
    out[a] = 1;
  }
  return out;
}

// The shape of `in` without the (already validated) reduced `axes`, for keepdim = false.
// (Decided by axis, not by size: a reduced axis of size 1 is dropped too.)
static Shape drop_axes(const Shape& in, const std::vector<int64_t>& axes) {
  int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> reduced(in.size(), false);
  for (int64_t axis : axes) reduced[axis < 0 ? axis + rank : axis] = true;
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!reduced[i]) out.push_back(in[i]);
  return out;
}

// Sums `a` into `out_shape` (same rank, each axis either equal or 1). Rows (the last axis) are
// added whole when the last axis is kept, or summed to a scalar when it is reduced.
static Tensor reduce_sum(const Tensor& a, const Shape& out_shape) {
  Tensor out = Tensor::zeros(out_shape, a.dtype());
  const Shape& shape = a.shape();
  if (a.numel() == 0) return out;
  std::vector<int64_t> sa = kernels::broadcast_strides(shape, shape);
  std::vector<int64_t> so = kernels::broadcast_strides(out_shape, shape);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    T* y = out.data<T>();
    int64_t n = shape.empty() ? 1 : shape.back();
    bool keep_last = !shape.empty() && so.back() != 0;
    kernels::for_each_row(shape, sa, so, [&](int64_t, int64_t off_a, int64_t off_o) {
      const T* xr = x + off_a;
      if (keep_last) {
        T* yr = y + off_o;
        for (int64_t j = 0; j < n; ++j) yr[j] += xr[j];
      } else {
        double acc = 0;  // accumulate a row in double: fewer rounding errors, same speed here
        for (int64_t j = 0; j < n; ++j) acc += xr[j];
        y[off_o] += static_cast<T>(acc);
      }
    });
  });
  return out;
}

Tensor sum_to(const Tensor& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  const Shape& in = a.shape();
  if (shape.size() > in.size())
    throw ShapeError("sum_to: cannot reduce " + shape_str(in) + " to the larger rank " + shape_str(shape));
  Shape keep(in.size(), 1);  // target shape left-padded with ones to a's rank
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t i = in.size() - 1 - k;
    keep[i] = shape[shape.size() - 1 - k];
    if (keep[i] != 1 && keep[i] != in[i])
      throw ShapeError("sum_to: shape " + shape_str(in) + " does not broadcast from " + shape_str(shape));
  }
  Tensor out = reduce_sum(a, keep);
  out = reshape(out, shape);
  return record(out, "sum_to", {a}, [a](const Tensor& dout) { accumulate_grad(a, expand(dout, a.shape())); });
}

Tensor expand(const Tensor& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  Shape target = broadcast_shapes(a.shape(), shape, "expand");
  if (target != shape)
    throw ShapeError("expand: shape " + shape_str(a.shape()) + " cannot be expanded to " + shape_str(shape));
  Tensor out = Tensor::empty(shape, a.dtype());
  std::vector<int64_t> sa = kernels::broadcast_strides(a.shape(), shape);
  std::vector<int64_t> so = kernels::broadcast_strides(shape, shape);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    T* y = out.data<T>();
    int64_t n = shape.empty() ? 1 : shape.back();
    bool contiguous = !shape.empty() && sa.back() != 0;
    kernels::for_each_row(shape, sa, so, [&](int64_t, int64_t off_a, int64_t off_o) {
      for (int64_t j = 0; j < n; ++j) y[off_o + j] = contiguous ? x[off_a + j] : x[off_a];
    });
  });
  return record(out, "expand", {a}, [a](const Tensor& dout) { accumulate_grad(a, sum_to(dout, a.shape())); });
}

Tensor sum(const Tensor& a, const std::vector<int64_t>& axes, bool keepdim) {
  Shape keep = keepdim_shape(a.shape(), axes, "sum");
  Tensor out = reduce_sum(a, keep);
  if (!keepdim) out = reshape(out, drop_axes(a.shape(), axes));
  return record(out, "sum", {a},
                [a, keep](const Tensor& dout) { accumulate_grad(a, expand(reshape(dout, keep), a.shape())); });
}

Tensor sum(const Tensor& a, int64_t axis, bool keepdim) { return sum(a, std::vector<int64_t>{axis}, keepdim); }

Tensor sum(const Tensor& a) {
  std::vector<int64_t> all(a.shape().size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  return sum(a, all, false);
}

Tensor mean(const Tensor& a, const std::vector<int64_t>& axes, bool keepdim) {
  Shape keep = keepdim_shape(a.shape(), axes, "mean");
  int64_t count = a.numel() / std::max<int64_t>(1, shape_numel(keep));
  return sum(a, axes, keepdim) * (1.0 / static_cast<double>(count));
}

Tensor mean(const Tensor& a, int64_t axis, bool keepdim) { return mean(a, std::vector<int64_t>{axis}, keepdim); }

Tensor mean(const Tensor& a) { return sum(a) * (1.0 / static_cast<double>(std::max<int64_t>(1, a.numel()))); }

Tensor max(const Tensor& a, int64_t axis, bool keepdim) {
  int64_t ax = normalize_axis(axis, a.dim(), "max");
  const Shape& shape = a.shape();
  if (shape[ax] == 0)
    throw ShapeError("max: axis " + std::to_string(axis) + " of shape " + shape_str(shape) + " is empty");
  int64_t outer = 1, inner = 1, n = shape[ax];
  for (int64_t i = 0; i < ax; ++i) outer *= shape[i];
  for (int64_t i = ax + 1; i < a.dim(); ++i) inner *= shape[i];
  Shape keep = shape;
  keep[ax] = 1;
  Tensor out = Tensor::empty(keep, a.dtype());
  auto argmax = std::make_shared<std::vector<int64_t>>(static_cast<size_t>(outer * inner));
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    T* y = out.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = 0;
        T best_value = x[o * n * inner + i];
        for (int64_t k = 1; k < n; ++k) {
          T v = x[(o * n + k) * inner + i];
          if (v > best_value || (v != v && best_value == best_value)) {  // NaN wins, as in torch
            best_value = v;
            best = k;
          }
        }
        y[o * inner + i] = best_value;
        (*argmax)[o * inner + i] = (o * n + best) * inner + i;
      }
  });
  if (!keepdim) out = reshape(out, drop_axes(shape, {ax}));
  return record(out, "max", {a}, [a, argmax](const Tensor& dout) {
    Tensor da = Tensor::zeros(a.shape(), a.dtype());
    dispatch(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* g = dout.data<T>();
      T* d = da.data<T>();
      for (size_t j = 0; j < argmax->size(); ++j) d[(*argmax)[j]] += g[j];
    });
    accumulate_grad(a, std::move(da));
  });
}

}  // namespace sf
