// attention.h: multi-head attention, the layer where tokens look at each other.
//
//   Q = x Wq, K = m Wk, V = m Wv          m = x (self-attention) or the encoder memory (cross)
//   split into H heads of size D = C / H   (B, T, C) -> (B, H, T, D)
//   A = softmax(Q K^T / sqrt(D) + bias, masked) V      one fused op, sf::attention
//   y = c_proj(merge heads of A)           (B, H, T, D) -> (B, T, C)
//
// Self-attention uses one fused projection c_attn (3C, C) with q, k, v stacked in that order
// (nanoGPT's layout); cross-attention projects queries with c_q (C, C) and keys/values from the
// memory with c_kv (2C, C), k then v. Masks: causal, key padding, sliding window. Masked scores
// are -inf and a fully masked row gives zeros, never NaN.
//
// Grouped-query attention (Ainslie et al. 2023) gives self-attention fewer key/value heads than
// query heads: n_kv_head = G divides H, each group of H / G consecutive query heads shares one K/V
// head, c_attn is (C + 2 G D, C) (q, then G heads of k, then G of v), and the KV cache holds G
// heads instead of H. G = H is standard multi-head attention, G = 1 multi-query attention
// (Shazeer 2019).
//
// Legend: B batch, T time (queries), S keys, C channels, H heads, G key/value heads, D head size.
#pragma once
#include <optional>
#include <vector>

#include "autograd/ops_attention.h"
#include "nn/layers.h"
#include "nn/positional.h"

namespace sf {

// Keys and values of the positions seen so far, for incremental decoding (no gradients).
struct KVCache {
  Tensor k, v;  // (B, G, S, D), undefined when empty (G = H for cross-attention)
  int64_t length() const { return k.defined() ? k.size(2) : 0; }
  void clear() { k = Tensor(), v = Tensor(); }
};

struct AttentionConfig {
  int64_t d_model = 0;                  // C
  int64_t n_head = 1;                   // H, must divide C
  bool bias = true;                     // biases in the projections
  double dropout = 0.0;                 // on the attention weights and on the output (nanoGPT's two dropouts)
  bool cross = false;                   // cross-attention: separate c_q and c_kv projections
  PosEncoding pos = PosEncoding::none;  // rope and alibi act inside attention
  double rope_base = 10000.0;
  AttentionKernel kernel = AttentionKernel::automatic;  // stored P or tiled online softmax
  int64_t n_kv_head = 0;  // G, self-attention only: key/value heads; 0 means n_head; must divide n_head
};

// Bytes the KV cache of one self-attention layer holds per token of context: a key and a value
// of G heads of size D, 2 G D elements (standard attention 2 C, multi-query 2 D).
int64_t kv_cache_bytes_per_token(const AttentionConfig& config, DType dtype = DType::f32);

class MultiHeadAttention : public Module {
 public:
  // Throws ConfigError when n_head does not divide d_model, n_kv_head does not divide n_head
  // (or RoPE gets an odd head size).
  explicit MultiHeadAttention(const AttentionConfig& config, Generator* gen = nullptr);

  // Self-attention over x (B, T, C) -> (B, T, C). With a cache, x holds only the new tokens:
  // their keys and values are appended to the cache and attention runs over all S of them.
  Tensor forward(const Tensor& x, const AttentionMask& mask = {}, KVCache* cache = nullptr);
  // Cross-attention: queries from x (B, T, C), keys and values from memory (B, S, C), whose
  // padding positions are memory_padding (B, S) or undefined. With a cache, the memory's keys and
  // values are computed on the first call and reused afterwards.
  Tensor forward_cross(const Tensor& x, const Tensor& memory, const Tensor& memory_padding = Tensor(),
                       KVCache* cache = nullptr);

  // When on, every forward keeps its attention weights (B, H, T, S) in last_attention().
  void keep_attention(bool on) { keep_attention_ = on; }
  const Tensor& last_attention() const { return last_attention_; }
  std::string extra_repr() const override;

  int64_t n_head() const { return config_.n_head; }
  int64_t n_kv_head() const { return config_.n_kv_head > 0 ? config_.n_kv_head : config_.n_head; }
  int64_t head_size() const { return config_.d_model / config_.n_head; }

  std::optional<Linear> c_attn;  // self only: (C + 2 G D, C), q k v stacked ((3C, C) when G = H)
  std::optional<Linear> c_q;     // cross only: (C, C)
  std::optional<Linear> c_kv;    // cross only: (2C, C), k v stacked
  Linear c_proj;                 // (C, C), the output projection
  Dropout attn_dropout, resid_dropout;

 private:
  // Self-attention takes one of three paths, chosen by reads_heads_in_place: the packed kernel
  // over qkv (attend_packed), or heads sliced out of qkv, rotated and cached as asked
  // (attend_heads), which then run the fused kernel or, with dropout on the weights, the composed
  // softmax(Q K^T) V (attend).
  bool reads_heads_in_place(const KVCache* cache) const;
  Tensor attend_packed(const Tensor& qkv, const AttentionMask& mask);                 // (B, T, C)
  Tensor attend_heads(const Tensor& qkv, const AttentionMask& mask, KVCache* cache);  // (B, T, C)
  Tensor attend(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionMask& mask);
  // The fused kernel's options for this layer: masks (key padding checked against (B, S)), ALiBi bias.
  AttentionOptions attention_options(const AttentionMask& mask, int64_t B, int64_t T, int64_t S, DType dtype) const;
  AttentionConfig config_;
  std::vector<double> alibi_slopes_;
  bool keep_attention_ = false;
  Tensor last_attention_;
};

// Splits chunk `index` of x (B, T, n*C) into heads: (B, H, T, D) with D = C / H. One strided
// copy forward, one scatter backward (this is how q, k, v leave the fused c_attn output).
Tensor split_heads(const Tensor& x, int64_t n_chunks, int64_t index, int64_t H);
// The inverse for one chunk: (B, H, T, D) -> (B, T, H*D).
Tensor merge_heads(const Tensor& x);
// The H heads of size D in columns [first, first + H * D) of x (B, T, W): (B, H, T, D). The same
// strided copy as split_heads, for chunks of different widths (q and the narrower k, v of GQA).
Tensor slice_heads(const Tensor& x, int64_t first, int64_t H, int64_t D);
// Each of the G heads of x (B, G, S, D) repeated n_rep times in place: (B, G * n_rep, S, D), head
// h of the result is head h / n_rep of x (Llama's repeat_kv). Backward sums each group.
Tensor repeat_heads(const Tensor& x, int64_t n_rep);

// The attention weights softmax(Q K^T / sqrt(D) + bias) with the mask, composed from matmul,
// masked_fill and softmax (the readable reference the fused op is tested against, and the path
// that applies dropout to the weights): q (B, H, T, D), k (B, H, S, D) -> (B, H, T, S).
Tensor attention_weights(const Tensor& q, const Tensor& k, const AttentionMask& mask, const Tensor& bias = Tensor());
// The mask as a 0/1 tensor (B or 1, 1, T, S), 1 = masked, or undefined when nothing is masked.
Tensor mask_tensor(const AttentionMask& mask, int64_t T, int64_t S, DType dtype);

}  // namespace sf
