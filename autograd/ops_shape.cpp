// ops_shape.cpp: reshape (a view), transpose/permute, slice and concat (copies).
#include <cstring>

#include "autograd/graph.h"
#include "autograd/cpu/kernels.h"
#include "autograd/ops.h"

namespace sf {

Tensor reshape(const Tensor& a, const Shape& shape) {
  Shape target = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) throw ShapeError("reshape: only one dimension can be -1 in " + shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else if (target[i] < 0) {
      throw ShapeError("reshape: negative dimension in " + shape_str(shape));
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || a.numel() % known != 0)
      throw ShapeError("reshape: cannot view " + shape_str(a.shape()) + " as " + shape_str(shape));
    target[infer] = a.numel() / known;
  }
  if (shape_numel(target) != a.numel())
    throw ShapeError("reshape: cannot view " + shape_str(a.shape()) + " (" + std::to_string(a.numel()) +
                     " elements) as " + shape_str(shape));
  if (target == a.shape()) return a;
  Tensor out = Tensor::view_of(a.storage(), a.impl()->offset, target, a.dtype());
  return record(out, "reshape", {a}, [a](const Tensor& dout) { accumulate_grad(a, reshape(dout, a.shape())); });
}

Tensor permute(const Tensor& a, const std::vector<int64_t>& axes) {
  int64_t rank = a.dim();
  if (static_cast<int64_t>(axes.size()) != rank)
    throw ShapeError("permute: " + std::to_string(axes.size()) + " axes given for a tensor of shape " +
                     shape_str(a.shape()));
  std::vector<int64_t> perm(axes.size());
  std::vector<bool> seen(axes.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    perm[i] = normalize_axis(axes[i], rank, "permute");
    if (seen[perm[i]]) throw ShapeError("permute: axis " + std::to_string(axes[i]) + " repeated");
    seen[perm[i]] = true;
  }
  // Output axis i reads input axis perm[i]: gather with the input's strides, permuted.
  std::vector<int64_t> in_strides = kernels::broadcast_strides(a.shape(), a.shape());
  Shape out_shape(rank);
  std::vector<int64_t> strides(rank);
  for (int64_t i = 0; i < rank; ++i) {
    out_shape[i] = a.shape()[perm[i]];
    strides[i] = in_strides[perm[i]];
  }
  Tensor out = Tensor::empty(out_shape, a.dtype());
  std::vector<int64_t> out_strides = kernels::broadcast_strides(out_shape, out_shape);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    T* y = out.data<T>();
    int64_t n = rank ? out_shape.back() : 1;
    int64_t step = rank ? strides.back() : 1;
    kernels::for_each_row(out_shape, strides, out_strides, [&](int64_t, int64_t off_in, int64_t off_out) {
      if (step == 1) {
        std::memcpy(y + off_out, x + off_in, static_cast<size_t>(n) * sizeof(T));
      } else {
        for (int64_t j = 0; j < n; ++j) y[off_out + j] = x[off_in + j * step];
      }
    });
  });
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
  return record(out, "permute", {a}, [a, inverse](const Tensor& dout) { accumulate_grad(a, permute(dout, inverse)); });
}

Tensor transpose(const Tensor& a, int64_t axis0, int64_t axis1) {
  int64_t rank = a.dim();
  std::vector<int64_t> perm(rank);
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[normalize_axis(axis0, rank, "transpose")], perm[normalize_axis(axis1, rank, "transpose")]);
  return permute(a, perm);
}

// Copies blocks between a tensor viewed as (outer, n_src, inner) and one viewed as
// (outer, n_dst, inner): dst[o, dst_start + k*dst_step] = src[o, src_start + k*src_step], k < count.
template <class T>
static void copy_blocks(const T* src, int64_t n_src, int64_t src_start, int64_t src_step, T* dst, int64_t n_dst,
                        int64_t dst_start, int64_t dst_step, int64_t outer, int64_t inner, int64_t count, bool add) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < count; ++k) {
      const T* s = src + (o * n_src + src_start + k * src_step) * inner;
      T* d = dst + (o * n_dst + dst_start + k * dst_step) * inner;
      if (add) {
        for (int64_t i = 0; i < inner; ++i) d[i] += s[i];
      } else {
        std::memcpy(d, s, static_cast<size_t>(inner) * sizeof(T));
      }
    }
}

static void outer_inner(const Shape& shape, int64_t axis, int64_t& outer, int64_t& inner) {
  outer = inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= shape[i];
  for (size_t i = axis + 1; i < shape.size(); ++i) inner *= shape[i];
}

Tensor slice(const Tensor& a, int64_t axis, int64_t start, int64_t end, int64_t step) {
  int64_t ax = normalize_axis(axis, a.dim(), "slice");
  int64_t n = a.shape()[ax];
  if (step <= 0) throw ValueError("slice: step must be positive, got " + std::to_string(step));
  // Python-style bounds: negative counts from the end, out-of-range clamps.
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  int64_t count = (end - start + step - 1) / step;
  Shape out_shape = a.shape();
  out_shape[ax] = count;
  Tensor out = Tensor::empty(out_shape, a.dtype());
  int64_t outer, inner;
  outer_inner(a.shape(), ax, outer, inner);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    copy_blocks(a.data<T>(), n, start, step, out.data<T>(), count, 0, 1, outer, inner, count, false);
  });
  return record(out, "slice", {a}, [a, n, start, step, count, outer, inner](const Tensor& dout) {
    Tensor da = Tensor::zeros(a.shape(), a.dtype());
    dispatch(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      copy_blocks(dout.data<T>(), count, 0, 1, da.data<T>(), n, start, step, outer, inner, count, false);
    });
    accumulate_grad(a, std::move(da));
  });
}

Tensor concat(const std::vector<Tensor>& tensors, int64_t axis) {
  if (tensors.empty()) throw ShapeError("concat: no tensors given");
  const Tensor& first = tensors[0];
  int64_t ax = normalize_axis(axis, first.dim(), "concat");
  Shape out_shape = first.shape();
  out_shape[ax] = 0;
  for (const Tensor& t : tensors) {
    kernels::check_same_dtype(first, t, "concat");
    bool fits = t.dim() == first.dim();
    for (int64_t i = 0; fits && i < t.dim(); ++i) fits = i == ax || t.shape()[i] == first.shape()[i];
    if (!fits)
      throw ShapeError("concat: shape " + shape_str(t.shape()) + " does not match " + shape_str(first.shape()) +
                       " outside axis " + std::to_string(axis));
    out_shape[ax] += t.shape()[ax];
  }
  Tensor out = Tensor::empty(out_shape, first.dtype());
  int64_t outer, inner;
  outer_inner(out_shape, ax, outer, inner);
  std::vector<int64_t> starts;
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    starts.push_back(at);
    int64_t n = t.shape()[ax];
    dispatch(t.dtype(), [&](auto tag) {
      using T = decltype(tag);
      copy_blocks(t.data<T>(), n, 0, 1, out.data<T>(), out_shape[ax], at, 1, outer, inner, n, false);
    });
    at += n;
  }
  return record(out, "concat", tensors, [tensors, ax, starts](const Tensor& dout) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!tensors[i].requires_grad()) continue;
      int64_t n = tensors[i].shape()[ax];
      accumulate_grad(tensors[i], slice(dout, ax, starts[i], starts[i] + n));
    }
  });
}

}  // namespace sf
