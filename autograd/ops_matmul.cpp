// ops_matmul.cpp: matrix products on BLAS. float32 -> sgemm, float64 -> dgemm; a transpose is a
// BLAS flag, never a copy. Under fp16/bf16 autocast the inputs and outputs are rounded to the
// low-precision grid (accumulation stays float32, as on tensor cores).
#include <algorithm>

#include "autograd/cpu/blas.h"
#include "autograd/graph.h"
#include "autograd/cpu/kernels.h"
#include "autograd/cpu/lowp.h"
#include "autograd/ops.h"
#include "autograd/cpu/threads.h"

namespace sf {

// C (M, N) = op(A) op(B) + beta * C on dense row-major operands, split over the thread pool.
template <class T>
static void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, const T* B, T* C, double beta) {
  blas::gemm_dense<T>(ta, tb, M, N, K, A, B, static_cast<T>(beta), C);
}

// True when two batch shapes broadcast (NumPy rules, right-aligned).
static bool broadcastable(const Shape& a, const Shape& b) {
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    int64_t x = a[a.size() - 1 - k], y = b[b.size() - 1 - k];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

Tensor matmul(const Tensor& a, const Tensor& b, Transposed t) {
  const bool ta = t.a, tb = t.b;
  kernels::check_same_dtype(a, b, "matmul");
  if (a.dim() < 2 || b.dim() < 2)
    throw ShapeError("matmul: both operands need at least 2 dimensions, got " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  int64_t M = ta ? a.size(-1) : a.size(-2), K = ta ? a.size(-2) : a.size(-1);
  int64_t Kb = tb ? b.size(-1) : b.size(-2), N = tb ? b.size(-2) : b.size(-1);
  if (K != Kb)
    throw ShapeError("matmul: inner dimensions differ, " + shape_str(a.shape()) + (ta ? "^T" : "") + " @ " +
                     shape_str(b.shape()) + (tb ? "^T" : "") + " (" + std::to_string(K) + " vs " + std::to_string(Kb) +
                     ")");
  Shape batch_a(a.shape().begin(), a.shape().end() - 2), batch_b(b.shape().begin(), b.shape().end() - 2);
  if (!broadcastable(batch_a, batch_b))
    throw ShapeError("matmul: batch dimensions of " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                     " cannot be broadcast together");
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape, a.dtype());
  Tensor al = lowp_copy(a), bl = lowp_copy(b);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = al.data<T>();
    const T* y = bl.data<T>();
    T* z = out.data<T>();
    if (batch_b.empty() && !ta) {
      // b is one matrix: fold a's batch into its rows, one gemm for everything.
      gemm(false, tb, shape_numel(batch) * M, N, K, x, y, z, 0);
      return;
    }
    // One gemm per batch element; batch strides (in matrices) handle broadcasting.
    Shape batch_shape = batch;
    batch_shape.push_back(1);  // a trailing 1 so the odometer walks one matrix per "row"
    Shape pa = batch_a, pb = batch_b;
    pa.push_back(1);
    pb.push_back(1);
    std::vector<int64_t> sa = kernels::broadcast_strides(pa, batch_shape);
    std::vector<int64_t> sb = kernels::broadcast_strides(pb, batch_shape);
    kernels::for_each_row(batch_shape, sa, sb, [&](int64_t i, int64_t ia, int64_t ib) {
      gemm(ta, tb, M, N, K, x + ia * M * K, y + ib * K * N, z + i * M * N, 0);
    });
  });
  out = lowp_round(out);
  return record(out, "matmul", {a, b}, [a, b, ta, tb](const Tensor& dout) {
    Tensor g = lowp_copy(dout);
    // C = op(A) op(B): d op(A) = dC op(B)^T and d op(B) = op(A)^T dC, transposed back when flagged.
    if (a.requires_grad()) {
      Tensor da = ta ? matmul(b, g, Transposed{tb, true}) : matmul(g, b, Transposed{false, !tb});
      accumulate_grad(a, lowp_round(sum_to(da, a.shape())));
    }
    if (b.requires_grad()) {
      Tensor db = tb ? matmul(g, a, Transposed{true, ta}) : matmul(a, g, Transposed{!ta, false});
      accumulate_grad(b, lowp_round(sum_to(db, b.shape())));
    }
  });
}

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul(a, b, Transposed{}); }
Tensor matmul_bt(const Tensor& a, const Tensor& b) { return matmul(a, b, Transposed{false, true}); }
Tensor matmul_at(const Tensor& a, const Tensor& b) { return matmul(a, b, Transposed{true, false}); }

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  kernels::check_same_dtype(x, weight, "linear");
  if (weight.dim() != 2 || x.dim() < 1 || x.size(-1) != weight.size(1))
    throw ShapeError("linear: input " + shape_str(x.shape()) + " does not fit weight " + shape_str(weight.shape()) +
                     " (expected (..., in) and (out, in))");
  int64_t in = weight.size(1), out_features = weight.size(0), rows = x.numel() / std::max<int64_t>(in, 1);
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out_features || bias.dtype() != x.dtype()))
    throw ShapeError("linear: bias " + shape_str(bias.shape()) + " does not fit weight " + shape_str(weight.shape()));
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  Tensor out = Tensor::empty(out_shape, x.dtype());
  Tensor xl = lowp_copy(x), wl = lowp_copy(weight);
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data<T>();
    if (bias.defined()) {  // y = b, then y += x W^T
      const T* b = bias.data<T>();
      parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) std::copy(b, b + out_features, y + r * out_features);
      });
    }
    gemm(false, true, rows, out_features, in, xl.data<T>(), wl.data<T>(), y, bias.defined() ? 1 : 0);
  });
  out = lowp_round(out);
  // Backward multiplies by the same rounded copies (autocast saves its casts for backward too).
  return record(out, "linear", {x, weight, bias},
                [x, weight, bias, xl, wl, rows, in, out_features](const Tensor& dout) {
                  Tensor g = lowp_copy(dout);
                  dispatch(x.dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* dy = g.data<T>();
                    if (x.requires_grad()) {  // dx (R, in) = dy (R, out) @ W (out, in)
                      Tensor dx = Tensor::empty(x.shape(), x.dtype());
                      gemm(false, false, rows, in, out_features, dy, wl.data<T>(), dx.data<T>(), 0);
                      accumulate_grad(x, lowp_round(std::move(dx)));
                    }
                    if (weight.requires_grad()) {  // dW (out, in) = dy^T (out, R) @ x (R, in)
                      Tensor dw = leaf_grad(weight);
                      bool direct = dw.defined() && autocast_precision() == Precision::fp32;  // add into .grad
                      if (!direct) dw = Tensor::empty(weight.shape(), weight.dtype());
                      gemm(true, false, out_features, in, rows, dy, xl.data<T>(), dw.data<T>(), direct ? 1 : 0);
                      if (!direct) accumulate_grad(weight, lowp_round(std::move(dw)));
                    }
                    if (bias.defined() && bias.requires_grad()) {  // db = sum of dy over rows
                      Tensor db = leaf_grad(bias);
                      bool direct = db.defined();
                      if (!direct) db = Tensor::zeros(bias.shape(), bias.dtype());
                      T* d = db.data<T>();
                      parallel_for(out_features, 64, [&](int64_t j0, int64_t j1) {  // columns split, rows in order
                        for (int64_t r = 0; r < rows; ++r)
                          for (int64_t j = j0; j < j1; ++j) d[j] += dy[r * out_features + j];
                      });
                      if (!direct) accumulate_grad(bias, std::move(db));
                    }
                  });
                });
}

}  // namespace sf
