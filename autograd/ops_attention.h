// attention.h: fused scaled dot-product attention, the core of every attention layer.
//
//   scores = Q K^T / sqrt(D) + bias        (B, H, T, S)
//   scores = -inf where masked (causal, sliding window, key padding)
//   P      = softmax(scores) over S        (a fully masked row gives zeros, never NaN)
//   out    = P V                           (B, H, T, D)
//
// One gemm per (batch, head) for Q K^T (K passed transposed as a BLAS flag) and one for P V;
// causal attention makes them per block of 32 query rows, over only the keys the block sees.
// P is kept for backward (and can be returned for inspection). Tests check it against the same
// computation composed from matmul, masked_fill and softmax.
//
// Or, with AttentionKernel::tiled, FlashAttention's algorithm (autograd/cpu/attention_tiles.h):
// an online softmax over tiles of 64 keys that never holds the (T, S) matrix, keeping one
// log-sum-exp per query row for backward, which recomputes each tile's probabilities from it.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

#include "autograd/names.h"
#include "autograd/tensor.h"

namespace sf {

// Which keys each query may see: the one masking rule of the project (the fused kernel, the
// composed reference in nn/attention.cpp and the layers all use it). Query t of T sits at
// absolute position S - T + t, the last T of the S keys (which is how a KV cache lines them up).
struct AttentionMask {
  bool causal = false;  // only keys s <= position
  int64_t window = 0;   // > 0: additionally only keys s > position - window (local attention)
  Tensor key_padding;   // (B, S), nonzero = padding key, never attended; or undefined

  // The keys [first, end) that query t may see before key padding (end <= first: none).
  struct KeyRange {
    int64_t first, end;
  };
  KeyRange visible_keys(int64_t t, int64_t T, int64_t S) const {
    const int64_t position = S - T + t;
    return {window > 0 ? std::max<int64_t>(0, position - window + 1) : 0, causal ? position + 1 : S};
  }
};

// How the fused op computes attention; all give the same result within rounding.
enum class AttentionKernel {
  stored,     // P (B, H, T, S) materialised and kept for backward: memory O(T S) per head
  tiled,      // online softmax over tiles, one log-sum-exp per row kept: memory O(T) per head
  automatic,  // attention_kernel_for(T, S, D): whichever was measured faster for the shape
};
// The kernels' names, as model.attention and bench_attention take them (names.h).
inline constexpr std::array<Named<AttentionKernel>, 3> kAttentionKernels = {
    {{"stored", AttentionKernel::stored}, {"tiled", AttentionKernel::tiled}, {"auto", AttentionKernel::automatic}}};
constexpr const char* attention_kernel_name(AttentionKernel kernel) { return name_of(kAttentionKernels, kernel); }
// The kernel `automatic` runs for T queries, S keys and head size D (the rule and its
// measurements: bench/README.md, "Tiled attention").
AttentionKernel attention_kernel_for(int64_t T, int64_t S, int64_t D);

struct AttentionOptions : AttentionMask {
  Tensor bias;       // additive score bias broadcastable to (B, H, T, S) (e.g. ALiBi); no grad
  double scale = 0;  // 0 means 1 / sqrt(D)
  AttentionKernel kernel = AttentionKernel::automatic;  // asking for `weights` runs `stored`
};

// q (B, H, T, D), k and v (B, H, S, D) -> (B, H, T, D). When `weights` is given, it receives
// the attention probabilities P (B, H, T, S) of this call (no graph).
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& options = {},
                 Tensor* weights = nullptr);

// Self-attention straight from a fused QKV projection: qkv (B, T, 3C) holds q, k, v side by
// side, each C = H * D wide with heads in order (nanoGPT's c_attn layout) -> (B, T, C), the heads
// already merged. The same result as split_heads + attention + merge_heads, without the copies.
Tensor attention_packed(const Tensor& qkv, int64_t n_head, const AttentionOptions& options = {},
                        Tensor* weights = nullptr);

}  // namespace sf
