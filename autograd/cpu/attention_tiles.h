// attention_tiles.h: attention in tiles with an online softmax (FlashAttention's algorithm,
// Dao et al. 2022; the loop order of FlashAttention-2), the kernel behind AttentionKernel::tiled.
// Not part of the public API.
//
// The stored kernel materialises P = softmax(scores) (B, H, T, S) and keeps it for backward;
// at T = S = 4096 that is 64 MiB per head in float32. This one never holds more than one
// (kQueryTile, kKeyTile) tile of scores per thread:
//
// Forward, for a tile of query rows i and its key tiles j = 1, 2, ... in turn:
//   S_ij = scale Q_i K_j^T + bias, masked to -inf           one (rows, cols) tile
//   m_new = max(m, rowmax(S_ij))                             running max per row
//   P_ij = exp(S_ij - m_new)
//   l = exp(m - m_new) l + rowsum(P_ij)                      running sum, rescaled to m_new
//   O_i = exp(m - m_new) O_i + P_ij V_j                      unnormalised output, rescaled alike
//   m = m_new
// and at the end O_i /= l, LSE_i = m + log(l) (the row's log-sum-exp, kept for backward).
// Rescaling by exp(m_old - m_new) is what makes the result equal one softmax over the whole row:
// every term ends up multiplied by exp(-m_final), whatever max it was first computed with.
//
// Backward recomputes each tile's probabilities from the saved LSE, P_ij = exp(S_ij - LSE_i), and
// uses Delta_i = rowsum(dO_i * O_i) (= rowsum(P_i * dP_i), without the whole row of P):
//   dV_j += P_ij^T dO_i     dP_ij = dO_i V_j^T     dS_ij = P_ij * (dP_ij - Delta_i)
//   dQ_i += scale dS_ij K_j     dK_j += scale dS_ij^T Q_i
//
// Tiles only span the keys their rows may see (AttentionMask::visible_keys), so causal and window
// attention skip the masked part. The forward splits (batch, head, query tile) over the thread
// pool, the backward (batch, head); either way each output is computed by one thread in an order
// fixed by the shape, so results have the same bits for any thread count.
#pragma once
#include <array>
#include <cstdint>

#include "autograd/cpu/head_gemm.h"
#include "autograd/ops_attention.h"

namespace sf::kernels {

constexpr int64_t kQueryTile = 64;  // query rows per tile
constexpr int64_t kKeyTile = 64;    // keys per tile

// Both attention kernels split their heads (or the forward's query tiles) over the pool in up to
// kFineChunksPerThread chunks per thread instead of parallel_for's 4 (threads.h): a head is long,
// and with 4 the thread that finishes first waits for most of the other's last head.

// One attention call as the tile loops see it: q (B, H, T, D), k and v (B, H, S, D) in the given
// layouts; bias (optional) is read at b * bias_strides[0] + h * [1] + t * [2] + s * [3] (a stride
// is 0 along a broadcast axis, so an ALiBi (1, H, T, S) bias is never expanded); pad (optional) is
// (B, S), nonzero = padding key.
template <class Tp>
struct TiledAttention {
  int64_t B, H, T, S, D;
  Tp scale;
  const AttentionMask* mask;
  const Tp *q, *k, *v;
  HeadLayout lq, lk, lv, lo;  // lo: the output's (and dout's) layout
  const Tp* bias = nullptr;
  std::array<int64_t, 4> bias_strides{};
  const Tp* pad = nullptr;
};

// out (layout a.lo) = softmax(masked scale Q K^T + bias) V; lse (B, H, T) = each row's
// log-sum-exp of the masked scores (-inf for a row that sees no key; its output is 0).
template <class Tp>
void tiled_attention_forward(const TiledAttention<Tp>& a, Tp* out, Tp* lse);

// Writes dq, dk, dv (layouts a.lq, a.lk, a.lv; never accumulates) from dout (layout a.lo), the
// forward's out and lse.
template <class Tp>
void tiled_attention_backward(const TiledAttention<Tp>& a, const Tp* out, const Tp* lse, const Tp* dout, Tp* dq, Tp* dk,
                              Tp* dv);

}  // namespace sf::kernels
