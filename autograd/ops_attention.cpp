// ops_attention.cpp: fused scaled dot-product attention, forward and backward side by side.
#include <cblas.h>

#include <cmath>
#include <limits>

#include "autograd/attention.h"
#include "autograd/graph.h"
#include "autograd/kernels.h"
#include "autograd/lowp.h"
#include "autograd/ops.h"
#include "autograd/simd.h"

namespace sf {

// Row-major C (M, N) = alpha op(A) op(B) + beta C, for float and double.
static void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                 const float* B, float beta, float* C) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(M), int(N), int(K), alpha, A, int(ta ? M : K), B, int(tb ? K : N), beta, C, int(N));
}
static void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
                 const double* B, double beta, double* C) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              int(M), int(N), int(K), alpha, A, int(ta ? M : K), B, int(tb ? K : N), beta, C, int(N));
}

static void check_attention_shapes(const Tensor& q, const Tensor& k, const Tensor& v,
                                   const AttentionOptions& opt) {
  auto fail = [&](const std::string& why) {
    throw ShapeError("attention: " + why + " (q " + shape_str(q.shape()) + ", k " +
                     shape_str(k.shape()) + ", v " + shape_str(v.shape()) + ")");
  };
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) fail("q, k, v must be (B, H, T, D)");
  if (k.shape() != v.shape()) fail("k and v must have the same shape");
  if (q.size(0) != k.size(0) || q.size(1) != k.size(1) || q.size(3) != k.size(3))
    fail("q and k must agree in batch, heads and head size");
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype()) fail("dtypes differ");
  if (opt.causal && q.size(2) > k.size(2)) fail("causal attention needs T <= S");
  if (opt.key_padding.defined() && opt.key_padding.shape() != Shape{k.size(0), k.size(2)})
    fail("key_padding must be (B, S) = " + shape_str({k.size(0), k.size(2)}) + ", got " +
         shape_str(opt.key_padding.shape()));
  if (opt.bias.defined() &&
      broadcast_shapes(opt.bias.shape(), {q.size(0), q.size(1), q.size(2), k.size(2)}, "attention") !=
          Shape{q.size(0), q.size(1), q.size(2), k.size(2)})
    fail("bias " + shape_str(opt.bias.shape()) + " does not broadcast to (B, H, T, S)");
  if (opt.window < 0) fail("window must be >= 0");
}

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt,
                 Tensor* weights) {
  check_attention_shapes(q, k, v, opt);
  const int64_t B = q.size(0), H = q.size(1), T = q.size(2), S = k.size(2), D = q.size(3);
  const double scale = opt.scale > 0 ? opt.scale : 1.0 / std::sqrt(static_cast<double>(D));
  Tensor ql = q, kl = k, vl = v;
  if (autocast_precision() != Precision::fp32) {  // low-precision matmul inputs
    ql = lowp_round(q.detach().clone());
    kl = lowp_round(k.detach().clone());
    vl = lowp_round(v.detach().clone());
  }
  Tensor probs = Tensor::empty({B, H, T, S}, q.dtype());  // P, kept for backward
  Tensor out = Tensor::empty({B, H, T, D}, q.dtype());     // (B, H, T, D)
  Tensor bias = opt.bias.defined() ? expand(opt.bias.detach(), {B, H, T, S}) : Tensor();
  Tensor pad = opt.key_padding.defined() ? opt.key_padding.to(q.dtype()).detach() : Tensor();
  dispatch(q.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    const Tp ninf = -std::numeric_limits<Tp>::infinity();
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h) {
        int64_t bh = b * H + h;
        const Tp* qp = ql.data<Tp>() + bh * T * D;
        const Tp* kp = kl.data<Tp>() + bh * S * D;
        const Tp* vp = vl.data<Tp>() + bh * S * D;
        Tp* p = probs.data<Tp>() + bh * T * S;
        gemm(false, true, T, S, D, static_cast<Tp>(scale), qp, kp, Tp(0), p);  // (T, S) = Q K^T
        for (int64_t t = 0; t < T; ++t) {
          Tp* row = p + t * S;
          if (bias.defined()) {
            const Tp* br = bias.data<Tp>() + (bh * T + t) * S;
            for (int64_t s = 0; s < S; ++s) row[s] += br[s];
          }
          int64_t pos = S - T + t;  // absolute position of this query
          for (int64_t s = 0; s < S; ++s) {
            bool masked = (opt.causal && s > pos) || (opt.window > 0 && s <= pos - opt.window) ||
                          (pad.defined() && pad.data<Tp>()[b * S + s] != 0);
            if (masked) row[s] = ninf;
          }
          simd::softmax_row(row, S);
        }
        Tp* op = out.data<Tp>() + bh * T * D;
        gemm(false, false, T, D, S, Tp(1), p, vp, Tp(0), op);  // (T, D) = P V
      }
  });
  if (weights) *weights = probs.detach();
  out = lowp_round(out);
  return record(out, "attention", {q, k, v},
                [q, k, v, probs, scale](const Tensor& dout) {
    const int64_t B = q.size(0), H = q.size(1), T = q.size(2), S = k.size(2), D = q.size(3);
    Tensor dq = Tensor::empty(q.shape(), q.dtype());
    Tensor dk = Tensor::empty(k.shape(), k.dtype());
    Tensor dv = Tensor::empty(v.shape(), v.dtype());
    Tensor dp = Tensor::empty({T, S}, q.dtype());  // scratch for one (b, h)
    Tensor g = lowp_round(dout.detach().clone());
    dispatch(q.dtype(), [&](auto tag) {
      using Tp = decltype(tag);
      for (int64_t bh = 0; bh < B * H; ++bh) {
        const Tp* qp = q.data<Tp>() + bh * T * D;
        const Tp* kp = k.data<Tp>() + bh * S * D;
        const Tp* vp = v.data<Tp>() + bh * S * D;
        const Tp* p = probs.data<Tp>() + bh * T * S;
        const Tp* go = g.data<Tp>() + bh * T * D;
        Tp* ds = dp.data<Tp>();
        gemm(true, false, S, D, T, Tp(1), p, go, Tp(0), dv.data<Tp>() + bh * S * D);  // dV = P^T dO
        gemm(false, true, T, S, D, Tp(1), go, vp, Tp(0), ds);                          // dP = dO V^T
        for (int64_t t = 0; t < T; ++t) {  // dS = P * (dP - sum(dP * P)), in place
          Tp* row = ds + t * S;
          const Tp* pr = p + t * S;
          Tp total = simd::dot(row, pr, S);
          for (int64_t s = 0; s < S; ++s) row[s] = pr[s] * (row[s] - total);
        }
        gemm(false, false, T, D, S, static_cast<Tp>(scale), ds, kp, Tp(0), dq.data<Tp>() + bh * T * D);  // dQ
        gemm(true, false, S, D, T, static_cast<Tp>(scale), ds, qp, Tp(0), dk.data<Tp>() + bh * S * D);   // dK
      }
    });
    accumulate_grad(q, lowp_round(dq));
    accumulate_grad(k, lowp_round(dk));
    accumulate_grad(v, lowp_round(dv));
  });
}

}  // namespace sf
