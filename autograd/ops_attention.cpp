// ops_attention.cpp: fused scaled dot-product attention, forward and backward side by side.
//
// One kernel serves two layouts. `attention` takes q, k, v as (B, H, T, D) tensors;
// `attention_packed` reads the heads straight out of the (B, T, 3C) output of a fused QKV
// projection and writes (B, T, C), so no head split/merge copies are needed either way. A head's
// rows are `ld` elements apart (D for a (B, H, T, D) tensor, 3C inside qkv), which BLAS takes as
// the leading dimension. The (batch, head) pairs are independent and split over the thread pool.
//
// Causal attention works in blocks of 32 query rows. Query t (at absolute position S - T + t)
// sees keys [0, S - T + t], so a block sees keys [0, S - T + its last row + 1) only and every
// product is cut to those keys: about half the work of the full (T, S) matrix, which would be
// mostly zeros (at T = S = 256, blocks of 32 compute 56% of it, blocks of 64 computed 62.5%:
// bench_gpt's medium attention ran about 10% faster with 32). The blocks depend on the shape
// only, so results do not depend on the thread count.
//
// Small heads multiply on small_gemm, larger ones on OpenBLAS (autograd/cpu/head_gemm.h).
//
// AttentionKernel::tiled runs the tile loops of autograd/cpu/attention_tiles.h instead, which keep
// a log-sum-exp per row in place of P; its graph nodes are the two tiled_* functions below.
#include <array>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/cpu/attention_tiles.h"
#include "autograd/cpu/blas.h"
#include "autograd/cpu/kernels.h"
#include "autograd/cpu/lowp.h"
#include "autograd/cpu/simd.h"
#include "autograd/cpu/small_gemm.h"
#include "autograd/cpu/threads.h"
#include "autograd/errors.h"
#include "autograd/graph.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"

namespace sf {

namespace {

using kernels::bhtd_layout;
using kernels::head_gemm;
using kernels::head_gemm_bt;
using kernels::HeadLayout;
using kernels::packed_layout;

struct AttentionShape {
  int64_t B, H, T, S, D;
  double scale;
  bool causal;
};

// A block of query rows [r0, r1) and the keys [0, keys) any of them may see. Non-causal
// attention is one block of all rows and all keys.
struct RowBlock {
  int64_t r0, r1, keys;
};
constexpr int64_t kCausalBlockRows = 32;

int64_t row_block_count(const AttentionShape& a) {
  if (!a.causal || a.T == 0) return 1;  // T = 0 is still one (empty) block, so dK, dV get written
  return (a.T + kCausalBlockRows - 1) / kCausalBlockRows;
}

RowBlock row_block(const AttentionShape& a, int64_t r) {
  if (!a.causal) return {0, a.T, a.S};
  const int64_t r0 = r * kCausalBlockRows, r1 = std::min(a.T, r0 + kCausalBlockRows);
  return {r0, r1, a.S - a.T + r1};  // the last row, at position S - T + r1 - 1, sees the most
}

bool use_small_gemm(const AttentionShape& a) { return kernels::use_small_gemm(a.D); }

// Forward for every (b, h): P = softmax(mask(scale Q K^T + bias)) into probs (B, H, T, S), out = P V.
// Per row block only the visible keys are computed; the rest of each row of P is set to 0.
template <class Tp>
void attention_forward(const AttentionShape& a, const AttentionOptions& opt, const Tp* q, HeadLayout lq, const Tp* k,
                       HeadLayout lk, const Tp* v, HeadLayout lv, Tp* out, HeadLayout lo, Tp* probs, const Tp* bias,
                       const std::array<int64_t, 4>& bs, const Tp* pad) {
  const int64_t H = a.H, T = a.T, S = a.S, D = a.D;
  const Tp ninf = -std::numeric_limits<Tp>::infinity();
  constexpr int64_t kWidth = xsimd::batch<Tp>::size;
  const bool small = use_small_gemm(a);
  parallel_for(a.B * H, 1, kFineChunksPerThread, [&](int64_t bh0, int64_t bh1) {
    std::vector<Tp> kt(small ? static_cast<size_t>(D * S) : 0);  // (D, S) = K^T of one head
    for (int64_t bh = bh0; bh < bh1; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      const Tp *qh = q + lq.at(b, h), *kh = k + lk.at(b, h), *vh = v + lv.at(b, h);
      if (small) kernels::transpose_block(S, D, kh, lk.ld, kt.data());
      for (int64_t r = 0, blocks = row_block_count(a); r < blocks; ++r) {
        const RowBlock blk = row_block(a, r);
        Tp* p = probs + (bh * T + blk.r0) * S;  // this block's rows of P, S apart
        head_gemm_bt(small, blk.r1 - blk.r0, blk.keys, D, static_cast<Tp>(a.scale), qh + blk.r0 * lq.ld, lq.ld, kh,
                     lk.ld, kt.data(), S, Tp(0), p, S);  // (rows, keys) = scale Q K^T
        for (int64_t t = blk.r0; t < blk.r1; ++t) {
          Tp* row = p + (t - blk.r0) * S;
          const auto [first, seen] = opt.visible_keys(t, T, S);  // keys [first, seen) before padding
          if (bias) {
            const Tp* br = bias + b * bs[0] + h * bs[1] + t * bs[2];
            for (int64_t s = 0; s < seen; ++s) row[s] += br[s * bs[3]];
          }
          for (int64_t s = 0; s < std::min(first, seen); ++s) row[s] = ninf;  // outside the window
          if (pad)
            for (int64_t s = 0; s < seen; ++s)
              if (pad[b * S + s] != 0) row[s] = ninf;
          // Keys [seen, n) are masked too, n = seen rounded up to whole vectors (at most S): the
          // softmax then runs on whole vectors only and writes exact zeros there (exp(-inf) = 0).
          // Filled as one vector store, which the softmax's first loads can take straight from
          // the store buffer (a scalar fill there made tiny's training steps 2.7% slower).
          const int64_t n = std::min(S, (seen + kWidth - 1) / kWidth * kWidth);
          simd::fill_vector_tail(row, seen, n, ninf);
          simd::softmax_row(row, n);
          std::fill(row + n, row + S, Tp(0));
        }
        head_gemm(small, false, blk.r1 - blk.r0, D, blk.keys, Tp(1), p, S, vh, lv.ld, Tp(0),
                  out + lo.at(b, h) + blk.r0 * lo.ld, lo.ld);  // (rows, D) = P V
      }
    }
  });
}

// Backward for every (b, h), given dout: dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(dP * P)),
// dQ = scale dS K, dK = scale dS^T Q. Each head's gradients are written, never accumulated.
// dQ is written per row block; dV and dK are sums over the row blocks. The blocks run last to
// first: the last one sees every key, so it writes all of dV and dK (beta 0) and the others add
// to the rows of the keys they see (beta 1).
template <class Tp>
void attention_backward(const AttentionShape& a, const Tp* q, HeadLayout lq, const Tp* k, HeadLayout lk, const Tp* v,
                        HeadLayout lv, const Tp* probs, const Tp* dout, HeadLayout lo, Tp* dq, Tp* dk, Tp* dv) {
  const int64_t H = a.H, T = a.T, S = a.S, D = a.D;
  const int64_t blocks = row_block_count(a);
  const int64_t max_rows = a.causal ? std::min(T, kCausalBlockRows) : T;
  const Tp scale = static_cast<Tp>(a.scale);
  const bool small = use_small_gemm(a);
  parallel_for(a.B * H, 1, kFineChunksPerThread, [&](int64_t bh0, int64_t bh1) {
    std::vector<Tp> scratch(static_cast<size_t>(max_rows * S));  // dP, then dS, for one block
    std::vector<Tp> vt(small ? static_cast<size_t>(D * S) : 0);  // (D, S) = V^T of one head
    Tp* ds = scratch.data();
    for (int64_t bh = bh0; bh < bh1; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      const Tp *qh = q + lq.at(b, h), *kh = k + lk.at(b, h), *vh = v + lv.at(b, h);
      Tp *dqh = dq + lq.at(b, h), *dkh = dk + lk.at(b, h), *dvh = dv + lv.at(b, h);
      if (small) kernels::transpose_block(S, D, vh, lv.ld, vt.data());
      for (int64_t r = blocks - 1; r >= 0; --r) {
        const RowBlock blk = row_block(a, r);
        const int64_t rows = blk.r1 - blk.r0, n = blk.keys;  // dS is (rows, n), n apart
        const Tp beta = r == blocks - 1 ? Tp(0) : Tp(1);
        const Tp* p = probs + (bh * T + blk.r0) * S;
        const Tp* go = dout + lo.at(b, h) + blk.r0 * lo.ld;
        const Tp* qb = qh + blk.r0 * lq.ld;
        head_gemm(small, true, n, D, rows, Tp(1), p, S, go, lo.ld, beta, dvh, lv.ld);              // dV
        head_gemm_bt(small, rows, n, D, Tp(1), go, lo.ld, vh, lv.ld, vt.data(), S, Tp(0), ds, n);  // dP
        for (int64_t t = 0; t < rows; ++t) {                                                       // dS, in place
          Tp* row = ds + t * n;
          const Tp* pr = p + t * S;
          const Tp total = simd::dot(row, pr, n);
          for (int64_t s = 0; s < n; ++s) row[s] = pr[s] * (row[s] - total);
        }
        head_gemm(small, false, rows, D, n, scale, ds, n, kh, lk.ld, Tp(0), dqh + blk.r0 * lq.ld, lq.ld);  // dQ
        head_gemm(small, true, n, D, rows, scale, ds, n, qb, lq.ld, beta, dkh, lk.ld);                     // dK
      }
    }
  });
}

// The optional inputs in the compute dtype: the bias as it is, read through broadcast strides
// over (B, H, T, S) (never expanded), the key padding (B, S).
struct MaskInputs {
  Tensor bias, pad;
  std::array<int64_t, 4> bias_strides{};
  MaskInputs(const AttentionOptions& opt, const AttentionShape& a, DType dtype) {
    if (opt.bias.defined()) {
      bias = opt.bias.detach().to(dtype);
      const std::vector<int64_t> st = kernels::broadcast_strides(bias.shape(), {a.B, a.H, a.T, a.S});
      std::copy(st.begin(), st.end(), bias_strides.begin());
    }
    if (opt.key_padding.defined()) pad = opt.key_padding.to(dtype).detach();
  }
  template <class Tp>
  const Tp* bias_ptr() const {
    return bias.defined() ? bias.data<Tp>() : nullptr;
  }
  template <class Tp>
  const Tp* pad_ptr() const {
    return pad.defined() ? pad.data<Tp>() : nullptr;
  }
};

void check_options(const AttentionOptions& opt, int64_t B, int64_t H, int64_t T, int64_t S, const std::string& shapes) {
  auto fail = [&](const std::string& why) { throw ShapeError("attention: " + why + " (" + shapes + ")"); };
  if (opt.causal && T > S) fail("causal attention needs T <= S");
  if (opt.key_padding.defined() && opt.key_padding.shape() != Shape{B, S})
    fail("key_padding must be (B, S) = " + shape_str({B, S}) + ", got " + shape_str(opt.key_padding.shape()));
  if (opt.bias.defined() && broadcast_shapes(opt.bias.shape(), {B, H, T, S}, "attention") != Shape{B, H, T, S})
    fail("bias " + shape_str(opt.bias.shape()) + " does not broadcast to (B, H, T, S)");
  if (opt.window < 0) fail("window must be >= 0");
}

double scale_of(const AttentionOptions& opt, int64_t D) {
  return opt.scale > 0 ? opt.scale : 1.0 / std::sqrt(static_cast<double>(D));
}

// ---- the tiled kernel's graph nodes ----

// Whether this call runs the tiled kernel: asked for, or picked by `automatic`; never when the
// caller wants the weights P, which only the stored kernel has.
bool runs_tiled(const AttentionOptions& opt, const AttentionShape& a, const Tensor* weights) {
  if (weights) return false;
  const AttentionKernel kernel =
      opt.kernel == AttentionKernel::automatic ? attention_kernel_for(a.T, a.S, a.D) : opt.kernel;
  return kernel == AttentionKernel::tiled;
}

template <class Tp>
kernels::TiledAttention<Tp> tiled_problem(const AttentionShape& a, const AttentionMask& mask, const MaskInputs& masks,
                                          const Tp* q, HeadLayout lq, const Tp* k, HeadLayout lk, const Tp* v,
                                          HeadLayout lv, HeadLayout lo) {
  kernels::TiledAttention<Tp> t{a.B, a.H, a.T, a.S, a.D, static_cast<Tp>(a.scale), &mask, q, k, v, lq, lk, lv, lo};
  t.bias = masks.bias_ptr<Tp>();
  t.bias_strides = masks.bias_strides;
  t.pad = masks.pad_ptr<Tp>();
  return t;
}

// attention() on the tiled kernel: keeps q, k, v, the output and lse (B, H, T) for backward.
Tensor tiled_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionShape& a,
                       const AttentionMask& mask, const MaskInputs& masks) {
  const HeadLayout lq = bhtd_layout(a.H, a.T, a.D), lkv = bhtd_layout(a.H, a.S, a.D);
  Tensor ql = lowp_copy(q), kl = lowp_copy(k), vl = lowp_copy(v);  // low-precision matmul inputs
  Tensor lse = Tensor::empty({a.B, a.H, a.T}, q.dtype());          // log-sum-exp per query row
  Tensor out = Tensor::empty({a.B, a.H, a.T, a.D}, q.dtype());
  dispatch(q.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    kernels::tiled_attention_forward<Tp>(
        tiled_problem<Tp>(a, mask, masks, ql.data<Tp>(), lq, kl.data<Tp>(), lkv, vl.data<Tp>(), lkv, lq),
        out.data<Tp>(), lse.data<Tp>());
  });
  out = lowp_round(out);
  const Tensor o = out.detach();  // O, for Delta = rowsum(dO * O)
  return record(
      out, "attention_tiled", {q, k, v},
      [q, k, v, ql, kl, vl, o, lse, a, mask, masks, lq, lkv](const Tensor& dout) {
        Tensor dq = Tensor::empty(q.shape(), q.dtype());  // every element written by the kernel
        Tensor dk = Tensor::empty(k.shape(), k.dtype());
        Tensor dv = Tensor::empty(v.shape(), v.dtype());
        Tensor g = lowp_copy(dout);
        dispatch(q.dtype(), [&](auto tag) {
          using Tp = decltype(tag);
          kernels::tiled_attention_backward<Tp>(
              tiled_problem<Tp>(a, mask, masks, ql.data<Tp>(), lq, kl.data<Tp>(), lkv, vl.data<Tp>(), lkv, lq),
              o.data<Tp>(), lse.data<Tp>(), g.data<Tp>(), dq.data<Tp>(), dk.data<Tp>(), dv.data<Tp>());
        });
        accumulate_grad(q, lowp_round(std::move(dq)));
        accumulate_grad(k, lowp_round(std::move(dk)));
        accumulate_grad(v, lowp_round(std::move(dv)));
      },
      {ql, kl, vl, lse});
}

// attention_packed() on the tiled kernel: keeps qkv, the output and lse (B, H, T) for backward.
Tensor tiled_attention_packed(const Tensor& qkv, const AttentionShape& a, const AttentionMask& mask,
                              const MaskInputs& masks) {
  const int64_t C = a.H * a.D;
  const HeadLayout lin = packed_layout(a.T, 3 * C, a.D), lout = packed_layout(a.T, C, a.D);
  Tensor x = lowp_copy(qkv);
  Tensor lse = Tensor::empty({a.B, a.H, a.T}, qkv.dtype());
  Tensor out = Tensor::empty({a.B, a.T, C}, qkv.dtype());
  dispatch(qkv.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    const Tp* base = x.data<Tp>();
    kernels::tiled_attention_forward<Tp>(
        tiled_problem<Tp>(a, mask, masks, base, lin, base + C, lin, base + 2 * C, lin, lout), out.data<Tp>(),
        lse.data<Tp>());
  });
  out = lowp_round(out);
  const Tensor o = out.detach();
  return record(out, "attention_packed_tiled", {qkv},
                [qkv, x, o, lse, a, mask, masks, lin, lout, C](const Tensor& dout) {
                  Tensor dqkv = Tensor::empty(qkv.shape(), qkv.dtype());  // every element written by the kernel
                  Tensor g = lowp_copy(dout);
                  dispatch(qkv.dtype(), [&](auto tag) {
                    using Tp = decltype(tag);
                    const Tp* base = x.data<Tp>();
                    Tp* d = dqkv.data<Tp>();
                    kernels::tiled_attention_backward<Tp>(
                        tiled_problem<Tp>(a, mask, masks, base, lin, base + C, lin, base + 2 * C, lin, lout),
                        o.data<Tp>(), lse.data<Tp>(), g.data<Tp>(), d, d + C, d + 2 * C);
                  });
                  accumulate_grad(qkv, lowp_round(std::move(dqkv)));
                },
                {x, lse});
}

}  // namespace

// Measured by bench/bench_attention.cpp on 2 cores (bench/README.md, "Tiled attention"): at the
// default models' rows (T 32 ... 1024, D 16 ... 64) the stored kernel is faster (tiled 0.5-0.9x:
// backward recomputes Q K^T and the exponentials, and P still fits in cache); at T = S = 4096 the
// tiled one is within about 10% (P, 64 MiB per head, no longer fits anywhere near a cache) and
// needs 1/20 of the memory. So: tiled from rows of 4096 x 4096 entries up, stored below. The head
// size does not change the crossover enough to matter.
AttentionKernel attention_kernel_for(int64_t T, int64_t S, int64_t D) {
  (void)D;
  constexpr int64_t kTiledFromEntries = int64_t(4096) * 4096;
  return T * S >= kTiledFromEntries ? AttentionKernel::tiled : AttentionKernel::stored;
}

Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt, Tensor* weights) {
  JobLabel label("attention");
  const std::string shapes =
      "q " + shape_str(q.shape()) + ", k " + shape_str(k.shape()) + ", v " + shape_str(v.shape());
  auto fail = [&](const std::string& why) { throw ShapeError("attention: " + why + " (" + shapes + ")"); };
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) fail("q, k, v must be (B, H, T, D)");
  if (k.shape() != v.shape()) fail("k and v must have the same shape");
  if (q.size(0) != k.size(0) || q.size(1) != k.size(1) || q.size(3) != k.size(3))
    fail("q and k must agree in batch, heads and head size");
  if (q.dtype() != k.dtype() || q.dtype() != v.dtype()) fail("dtypes differ");
  const AttentionShape a{q.size(0), q.size(1), q.size(2), k.size(2), q.size(3), scale_of(opt, q.size(3)), opt.causal};
  check_options(opt, a.B, a.H, a.T, a.S, shapes);
  if (runs_tiled(opt, a, weights)) return tiled_attention(q, k, v, a, opt, MaskInputs(opt, a, q.dtype()));
  const HeadLayout lq = bhtd_layout(a.H, a.T, a.D), lkv = bhtd_layout(a.H, a.S, a.D);
  Tensor ql = lowp_copy(q), kl = lowp_copy(k), vl = lowp_copy(v);  // low-precision matmul inputs
  Tensor probs = Tensor::empty({a.B, a.H, a.T, a.S}, q.dtype());   // P, kept for backward
  Tensor out = Tensor::empty({a.B, a.H, a.T, a.D}, q.dtype());
  MaskInputs masks(opt, a, q.dtype());
  dispatch(q.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    attention_forward<Tp>(a, opt, ql.data<Tp>(), lq, kl.data<Tp>(), lkv, vl.data<Tp>(), lkv, out.data<Tp>(), lq,
                          probs.data<Tp>(), masks.bias_ptr<Tp>(), masks.bias_strides, masks.pad_ptr<Tp>());
  });
  if (weights) *weights = probs.detach();
  out = lowp_round(out);
  return record(out, "attention", {q, k, v},
                [q, k, v, probs, a, lq, lkv](const Tensor& dout) {
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
                },
                {probs});
}

Tensor attention_packed(const Tensor& qkv, int64_t n_head, const AttentionOptions& opt, Tensor* weights) {
  JobLabel label("attention_packed");
  if (qkv.dim() != 3 || n_head <= 0 || qkv.size(2) % (3 * n_head) != 0)
    throw ShapeError("attention_packed: qkv must be (B, T, 3 * H * D) with H = " + std::to_string(n_head) + ", got " +
                     shape_str(qkv.shape()));
  const int64_t B = qkv.size(0), T = qkv.size(1), C = qkv.size(2) / 3, D = C / n_head;
  const AttentionShape a{B, n_head, T, T, D, scale_of(opt, D), opt.causal};
  check_options(opt, B, n_head, T, T, "qkv " + shape_str(qkv.shape()));
  if (runs_tiled(opt, a, weights)) return tiled_attention_packed(qkv, a, opt, MaskInputs(opt, a, qkv.dtype()));
  const HeadLayout lin = packed_layout(T, 3 * C, D), lout = packed_layout(T, C, D);
  Tensor x = lowp_copy(qkv);
  Tensor probs = Tensor::empty({B, n_head, T, T}, qkv.dtype());
  Tensor out = Tensor::empty({B, T, C}, qkv.dtype());
  MaskInputs masks(opt, a, qkv.dtype());
  dispatch(qkv.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    const Tp* base = x.data<Tp>();
    attention_forward<Tp>(a, opt, base, lin, base + C, lin, base + 2 * C, lin, out.data<Tp>(), lout, probs.data<Tp>(),
                          masks.bias_ptr<Tp>(), masks.bias_strides, masks.pad_ptr<Tp>());
  });
  if (weights) *weights = probs.detach();
  out = lowp_round(out);
  return record(out, "attention_packed", {qkv},
                [x, qkv, probs, a, lin, lout, C](const Tensor& dout) {
                  Tensor dqkv = Tensor::empty(qkv.shape(), qkv.dtype());  // every element written below
                  Tensor g = lowp_copy(dout);
                  dispatch(qkv.dtype(), [&](auto tag) {
                    using Tp = decltype(tag);
                    const Tp* base = x.data<Tp>();
                    Tp* d = dqkv.data<Tp>();
                    attention_backward<Tp>(a, base, lin, base + C, lin, base + 2 * C, lin, probs.data<Tp>(),
                                           g.data<Tp>(), lout, d, d + C, d + 2 * C);
                  });
                  accumulate_grad(qkv, lowp_round(std::move(dqkv)));
                },
                {x, probs});
}

}  // namespace sf
