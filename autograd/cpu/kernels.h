// kernels.h: small loop helpers shared by the op files (not part of the public API).
// Each runs one plain loop over contiguous memory, written once for float and double, split
// over the thread pool when it is long (elementwise work: the result does not depend on the split).
#pragma once
#include <vector>

#include "autograd/tensor.h"
#include "autograd/cpu/threads.h"

namespace sf::kernels {

// out[i] = f(a[i]) in a's dtype.
template <class F>
Tensor map(const Tensor& a, F f) {
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    T* y = out.data<T>();
    parallel_for(a.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = f(x[i]);
    });
  });
  return out;
}

// out[i] = f(a[i], b[i]) for two tensors of the same shape and dtype.
template <class F>
Tensor map2(const Tensor& a, const Tensor& b, F f) {
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* z = out.data<T>();
    parallel_for(a.numel(), kElementGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = f(x[i], y[i]);
    });
  });
  return out;
}

// Element strides of a tensor of shape `in` seen through the broadcast shape `out`
// (0 along broadcast axes; `in` is right-aligned to `out` as in NumPy).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Walks `shape` row by row (a row = the last axis) like an odometer. For each row calls
// f(row, off_a, off_b), where off_a / off_b are the element offsets of that row's start in two
// operands with strides sa / sb over `shape` (stride 0 = broadcast along that axis). With a range,
// only the rows [row0, row1), the odometer set to row0 first (so pieces can run on other threads).
template <class F>
void for_each_row(const Shape& shape, const std::vector<int64_t>& sa, const std::vector<int64_t>& sb, F f,
                  int64_t row0 = 0, int64_t row1 = -1) {
  size_t rank = shape.size();
  int64_t n = rank ? shape[rank - 1] : 1;
  int64_t total = shape_numel(shape);
  if (total == 0) return;
  if (row1 < 0) row1 = total / n;
  std::vector<int64_t> index(rank, 0);
  int64_t off_a = 0, off_b = 0;
  for (int64_t d = static_cast<int64_t>(rank) - 2, rest = row0; d >= 0; --d) {
    index[d] = rest % shape[d];
    rest /= shape[d];
    off_a += index[d] * sa[d];
    off_b += index[d] * sb[d];
  }
  for (int64_t row = row0; row < row1; ++row) {
    f(row, off_a, off_b);
    for (int64_t d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      off_a += sa[d];
      off_b += sb[d];
      if (++index[d] < shape[d]) break;
      off_a -= sa[d] * shape[d];
      off_b -= sb[d] * shape[d];
      index[d] = 0;
    }
  }
}

// Throws ShapeError unless a and b have the same dtype.
void check_same_dtype(const Tensor& a, const Tensor& b, const char* op);

// dL/dx of y = GELU(x) from dL/dy (same shape), over the thread pool: the backward of gelu and of
// linear_gelu's activation.
Tensor gelu_grad(const Tensor& dout, const Tensor& x, bool tanh_form);

// How many pieces of dx linear's panel backward has had computed by another thread than the one
// running their chunk, since the program started (ops_matmul.cpp). For the tests, which check that
// those pieces have the same bits.
int64_t linear_dx_pieces_taken_over();

}  // namespace sf::kernels
