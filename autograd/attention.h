// attention.h: fused scaled dot-product attention, the core of every attention layer.
//
//   scores = Q K^T / sqrt(D) + bias        (B, H, T, S)
//   scores = -inf where masked (causal, sliding window, key padding)
//   P      = softmax(scores) over S        (a fully masked row gives zeros, never NaN)
//   out    = P V                           (B, H, T, D)
//
// One gemm per (batch, head) for Q K^T (K passed transposed as a BLAS flag) and one for P V;
// causal attention makes them per block of 64 query rows, over only the keys the block sees.
// P is kept for backward (and can be returned for inspection). Tests check it against the same
// computation composed from matmul, masked_fill and softmax.
#pragma once
#include "autograd/tensor.h"

namespace sf {

struct AttentionOptions {
  bool causal = false;  // query t (at absolute position S - T + t) sees keys s <= S - T + t
  int64_t window = 0;   // > 0: additionally only keys s > position - window (local attention)
  Tensor key_padding;   // (B, S), nonzero = padding key, never attended; or undefined
  Tensor bias;          // additive score bias broadcastable to (B, H, T, S) (e.g. ALiBi); no grad
  double scale = 0;     // 0 means 1 / sqrt(D)
};

// q (B, H, T, D), k and v (B, H, S, D) -> (B, H, T, D). When `weights` is given, it receives
// the attention probabilities P (B, H, T, S) of this call (no graph).
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v,
                 const AttentionOptions& options = {}, Tensor* weights = nullptr);

// Self-attention straight from a fused QKV projection: qkv (B, T, 3C) holds q, k, v side by
// side, each C = H * D wide with heads in order (nanoGPT's c_attn layout) -> (B, T, C), the heads
// already merged. The same result as split_heads + attention + merge_heads, without the copies.
Tensor attention_packed(const Tensor& qkv, int64_t n_head, const AttentionOptions& options = {},
                        Tensor* weights = nullptr);

}  // namespace sf
