// ops_attention.cpp: fused scaled dot-product attention, forward and backward side by side.
//
// One kernel serves two layouts. `attention` takes q, k, v as (B, H, T, D) tensors;
// `attention_packed` reads the heads straight out of the (B, T, 3C) output of a fused QKV
// projection and writes (B, T, C), so no head split/merge copies are needed either way. A head's
// rows are `ld` elements apart (D for a (B, H, T, D) tensor, 3C inside qkv), which BLAS takes as
// the leading dimension. The (batch, head) pairs are independent and split over the thread pool.
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/attention.h"
#include "autograd/blas.h"
#include "autograd/graph.h"
#include "autograd/kernels.h"
#include "autograd/lowp.h"
#include "autograd/ops.h"
#include "autograd/simd.h"
#include "autograd/threads.h"

namespace sf {

namespace {

// Where the (T, D) matrix of head (b, h) lives: at offset b * sb + h * sh, rows ld apart.
struct HeadLayout {
  int64_t sb, sh, ld;
  int64_t at(int64_t b, int64_t h) const { return b * sb + h * sh; }
};
HeadLayout bhtd_layout(int64_t H, int64_t T, int64_t D) { return {H * T * D, T * D, D}; }
HeadLayout packed_layout(int64_t T, int64_t width, int64_t D) { return {T * width, D, width}; }

struct AttentionShape {
  int64_t B, H, T, S, D;
  double scale;
};

// Forward for every (b, h): P = softmax(mask(scale Q K^T + bias)) into probs (B, H, T, S), out = P V.
template <class Tp>
void attention_forward(const AttentionShape& a, const AttentionOptions& opt, const Tp* q, HeadLayout lq,
                       const Tp* k, HeadLayout lk, const Tp* v, HeadLayout lv, Tp* out, HeadLayout lo,
                       Tp* probs, const Tp* bias, const Tp* pad) {
  const int64_t H = a.H, T = a.T, S = a.S, D = a.D;
  const Tp ninf = -std::numeric_limits<Tp>::infinity();
  parallel_for(a.B * H, 1, [&](int64_t bh0, int64_t bh1) {
    for (int64_t bh = bh0; bh < bh1; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      Tp* p = probs + bh * T * S;
      blas::gemm(false, true, T, S, D, static_cast<Tp>(a.scale), q + lq.at(b, h), lq.ld, k + lk.at(b, h), lk.ld,
                 Tp(0), p, S);  // (T, S) = scale Q K^T
      for (int64_t t = 0; t < T; ++t) {
        Tp* row = p + t * S;
        if (bias) {
          const Tp* br = bias + (bh * T + t) * S;
          for (int64_t s = 0; s < S; ++s) row[s] += br[s];
        }
        const int64_t pos = S - T + t;  // absolute position of this query
        if (opt.causal)
          for (int64_t s = pos + 1; s < S; ++s) row[s] = ninf;
        if (opt.window > 0)
          for (int64_t s = 0; s <= pos - opt.window && s < S; ++s) row[s] = ninf;
        if (pad)
          for (int64_t s = 0; s < S; ++s)
            if (pad[b * S + s] != 0) row[s] = ninf;
        simd::softmax_row(row, S);
      }
      blas::gemm(false, false, T, D, S, Tp(1), p, S, v + lv.at(b, h), lv.ld, Tp(0), out + lo.at(b, h), lo.ld);
    }
  });
}

// Backward for every (b, h), given dout: dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dP * P)),
// dQ = scale dS K, dK = scale dS^T Q. Each head's gradients are written, never accumulated.
template <class Tp>
void attention_backward(const AttentionShape& a, const Tp* q, HeadLayout lq, const Tp* k, HeadLayout lk,
                        const Tp* v, HeadLayout lv, const Tp* probs, const Tp* dout, HeadLayout lo, Tp* dq,
                        Tp* dk, Tp* dv) {
  const int64_t H = a.H, T = a.T, S = a.S, D = a.D;
  parallel_for(a.B * H, 1, [&](int64_t bh0, int64_t bh1) {
    std::vector<Tp> scratch(static_cast<size_t>(T * S));  // dP, then dS, for one head at a time
    Tp* ds = scratch.data();
    for (int64_t bh = bh0; bh < bh1; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      const Tp* p = probs + bh * T * S;
      const Tp* go = dout + lo.at(b, h);
      blas::gemm(true, false, S, D, T, Tp(1), p, S, go, lo.ld, Tp(0), dv + lv.at(b, h), lv.ld);  // dV
      blas::gemm(false, true, T, S, D, Tp(1), go, lo.ld, v + lv.at(b, h), lv.ld, Tp(0), ds, S);   // dP
      for (int64_t t = 0; t < T; ++t) {  // dS, in place
        Tp* row = ds + t * S;
        const Tp* pr = p + t * S;
        const Tp total = simd::dot(row, pr, S);
        for (int64_t s = 0; s < S; ++s) row[s] = pr[s] * (row[s] - total);
      }
      const Tp scale = static_cast<Tp>(a.scale);
      blas::gemm(false, false, T, D, S, scale, ds, S, k + lk.at(b, h), lk.ld, Tp(0), dq + lq.at(b, h), lq.ld);
      blas::gemm(true, false, S, D, T, scale, ds, S, q + lq.at(b, h), lq.ld, Tp(0), dk + lk.at(b, h), lk.ld);
    }
  });
}

// The optional inputs as plain (B, H, T, S) / (B, S) tensors of the compute dtype.
struct MaskInputs {
  Tensor bias, pad;
  MaskInputs(const AttentionOptions& opt, const AttentionShape& a, DType dtype) {
    if (opt.bias.defined()) bias = expand(opt.bias.detach(), {a.B, a.H, a.T, a.S});
    if (opt.key_padding.defined()) pad = opt.key_padding.to(dtype).detach();
  }
  template <class Tp>
  const Tp* bias_ptr() const { return bias.defined() ? bias.data<Tp>() : nullptr; }
  template <class Tp>
  const Tp* pad_ptr() const { return pad.defined() ? pad.data<Tp>() : nullptr; }
};

void check_options(const AttentionOptions& opt, int64_t B, int64_t H, int64_t T, int64_t S,
                   const std::string& shapes) {
  auto fail = [&](const std::string& why) { throw ShapeError("attention: " + why + " (" + shapes + ")"); };
  if (opt.causal && T > S) fail("causal attention needs T <= S");
  if (opt.key_padding.defined() && opt.key_padding.shape() != Shape{B, S})
    fail("key_padding must be (B, S) = " + shape_str({B, S}) + ", got " + shape_str(opt.key_padding.shape()));
  if (opt.bias.defined() &&
      broadcast_shapes(opt.bias.shape(), {B, H, T, S}, "attention") != Shape{B, H, T, S})
    fail("bias " + shape_str(opt.bias.shape()) + " does not broadcast to (B, H, T, S)");
  if (opt.window < 0) fail("window must be >= 0");
}

double scale_of(const AttentionOptions& opt, int64_t D) {
  return opt.scale > 0 ? opt.scale : 1.0 / std::sqrt(static_cast<double>(D));
}

}  // namespace

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt,
                 Tensor* weights) {
  const std::string shapes = "q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " +
                             shape_str(v.shape());
  auto fail = [&](const std::string& why) { throw ShapeError("attention: " + why + " (" + shapes + ")"); };
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) fail("q, k, v must be (B, H, T, D)");
  if (k.shape() != v.shape()) fail("k and v must have the same shape");
  if (q.size(0) != k.size(0) || q.size(1) != k.size(1) || q.size(3) != k.size(3))
    fail("q and k must agree in batch, heads and head size");
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype()) fail("dtypes differ");
  const AttentionShape a{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), scale_of(opt, q.size(3))};
  check_options(opt, a.B, a.H, a.T, a.S, shapes);
  const HeadLayout lq = bhtd_layout(a.H, a.T, a.D), lkv = bhtd_layout(a.H, a.S, a.D);
  Tensor ql = lowp_copy(q), kl = lowp_copy(k), vl = lowp_copy(v);  // low-precision matmul inputs
  Tensor probs = Tensor::empty({a.B, a.H, a.T, a.S}, q.dtype());    // P, kept for backward
  Tensor out = Tensor::empty({a.B, a.H, a.T, a.D}, q.dtype());
  MaskInputs masks(opt, a, q.dtype());
  dispatch(q.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    attention_forward<Tp>(a, opt, ql.data<Tp>(), lq, kl.data<Tp>(), lkv, vl.data<Tp>(), lkv, out.data<Tp>(), lq,
                          probs.data<Tp>(), masks.bias_ptr<Tp>(), masks.pad_ptr<Tp>());
  });
  if (weights) *weights = probs.detach();
  out = lowp_round(out);
  return record(out, "attention", {q, k, v}, [q, k, v, probs, a, lq, lkv](const Tensor& dout) {
    Tensor dq = Tensor::empty(q.shape(), q.dtype());
    Tensor dk = Tensor::empty(k.shape(), k.dtype());
    Tensor dv = Tensor::empty(v.shape(), v.dtype());
    Tensor g = lowp_copy(dout);
    dispatch(q.dtype(), [&](auto tag) {
      using Tp = decltype(tag);
      attention_backward<Tp>(a, q.data<Tp>(), lq, k.data<Tp>(), lkv, v.data<Tp>(), lkv, probs.data<Tp>(),
                             g.data<Tp>(), lq, dq.data<Tp>(), dk.data<Tp>(), dv.data<Tp>());
    });
    accumulate_grad(q, lowp_round(std::move(dq)));
    accumulate_grad(k, lowp_round(std::move(dk)));
    accumulate_grad(v, lowp_round(std::move(dv)));
  });
}

Tensor attention_packed(const Tensor& qkv, int64_t n_head, const AttentionOptions& opt, Tensor* weights) {
  if (qkv.dim() != 3 || n_head <= 0 || qkv.size(2) % (3 * n_head) != 0)
    throw ShapeError("attention_packed: qkv must be (B, T, 3 * H * D) with H = " + std::to_string(n_head) +
                     ", got " + shape_str(qkv.shape()));
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, D = C / n_head;
  const AttentionShape a{B, n_head, T, T, D, scale_of(opt, D)};
  check_options(opt, B, n_head, T, T, "qkv " + shape_str(qkv.shape()));
  const HeadLayout lin = packed_layout(T, 3 * C, D), lout = packed_layout(T, C, D);
  Tensor x = lowp_copy(qkv);
  Tensor probs = Tensor::empty({B, n_head, T, T}, qkv.dtype());
  Tensor out = Tensor::empty({B, T, C}, qkv.dtype());
  MaskInputs masks(opt, a, qkv.dtype());
  dispatch(qkv.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    const Tp* base = x.data<Tp>();
    attention_forward<Tp>(a, opt, base, lin, base + C, lin, base + 2 * C, lin, out.data<Tp>(), lout,
                          probs.data<Tp>(), masks.bias_ptr<Tp>(), masks.pad_ptr<Tp>());
  });
  if (weights) *weights = probs.detach();
  out = lowp_round(out);
  return record(out, "attention_packed", {qkv}, [x, qkv, probs, a, lin, lout, C](const Tensor& dout) {
    Tensor dqkv = Tensor::empty(qkv.shape(), qkv.dtype());  // every element written below
    Tensor g = lowp_copy(dout);
    dispatch(qkv.dtype(), [&](auto tag) {
      using Tp = decltype(tag);
      const Tp* base = x.data<Tp>();
      Tp* d = dqkv.data<Tp>();
      attention_backward<Tp>(a, base, lin, base + C, lin, base + 2 * C, lin, probs.data<Tp>(), g.data<Tp>(), lout,
                             d, d + C, d + 2 * C);
    });
    accumulate_grad(qkv, lowp_round(std::move(dqkv)));
  });
}

}  // namespace sf
