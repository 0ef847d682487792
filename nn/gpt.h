// gpt.h: a decoder-only language model, laid out exactly like nanoGPT's model.py so that its
// checkpoints load by name:
//
//   transformer.wte      Embedding (V, C)       token vectors
//   transformer.wpe      Embedding (block, C)   only for pos_encoding "learned"
//   transformer.h.{i}    SelfAttentionBlock with a causal mask: ln_1, attn.c_attn (3C, C),
//                        attn.c_proj (C, C), ln_2, mlp.c_fc (4C, C), mlp.c_proj (C, 4C)
//   transformer.ln_f     the final LayerNorm (Pre-LN only)
//   lm_head              Linear (V, C) without bias; with tied_head it IS wte.weight
//
//   logits = lm_head(ln_f(blocks(drop(s * wte[idx] + wpe[pos]))))  (B, T, V)
//
// s = 1, or sqrt(C) with scale_embeddings (Vaswani et al.; wte then starts N(0, 1/C), so each
// element of a token vector entering block 1 has variance 1, as Xiong et al.'s analysis assumes).
//
// Legend: B batch, T time, C channels (n_embd), H heads, D head size, V vocab.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "nn/blocks.h"
#include "nn/init.h"

namespace sf {

// A plain struct with nanoGPT's defaults; the training library fills it from JSON, turning the
// options' names into these enums (train/models.cpp).
struct GPTConfig {
  int64_t vocab_size = 50304;
  int64_t block_size = 1024;  // the longest sequence (positions 0 .. block_size-1)
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_embd = 768;
  int64_t d_ff = 0;  // MLP hidden size; 0 means 4 * n_embd
  double dropout = 0.0;
  bool bias = true;                                 // biases in Linear and LayerNorm, as nanoGPT's `bias`
  bool tied_head = true;                            // lm_head.weight is transformer.wte.weight
  bool scale_embeddings = false;                    // wte ~ N(0, 1/C) at init and wte[idx] * sqrt(C) in the forward
  PosEncoding pos_encoding = PosEncoding::learned;  // sinusoidal | learned | rope | alibi | none
  NormPlacement norm = NormPlacement::pre;          // pre | post
  Activation activation = Activation::gelu;         // gelu (exact erf) | gelu_tanh | relu
  InitScheme init = InitScheme::gpt2;               // gpt2 | xavier
  int64_t window = 0;                               // > 0: sliding-window attention of this width
  AttentionKernel attention = AttentionKernel::automatic;  // stored | tiled | auto (autograd/ops_attention.h)
  int64_t n_kv_head = 0;  // key/value heads: 0 or n_head standard, 1 multi-query, a divisor grouped-query
  double ln_eps = 1e-5;
  double rope_base = 10000.0;
  uint64_t seed = 1337;  // initial weights and dropout masks
  // Activation recomputation (autograd/checkpoint.h): with grad on, each half of a block (the
  // attention sublayer, the MLP sublayer) keeps only its input for backward and runs again there.
  // Needs dropout 0 (a second run would draw new masks).
  bool recompute = false;

  // Throws ConfigError naming the first impossible field (e.g. "n_embd 100 is not divisible
  // by n_head 3").
  void validate() const;
};

// Bytes the KV cache holds per token of context, over all n_layer layers (nn/attention.h's
// kv_cache_bytes_per_token per layer): 2 n_layer n_kv_head D elements.
int64_t kv_cache_bytes_per_token(const GPTConfig& config, DType dtype = DType::f32);

// Keys and values of every layer for incremental decoding.
struct GPTCache {
  std::vector<KVCache> layers;
  int64_t length() const { return layers.empty() ? 0 : layers.front().length(); }
  void clear() { layers.clear(); }
};

class GPT : public Module {
 public:
  explicit GPT(const GPTConfig& config);  // validates, initialises, flattens the parameters

  // idx (B, T) token ids -> logits (B, T, V). T <= block_size.
  Tensor forward(const IntTensor& idx);
  // Incremental decoding: idx (B, T) holds only the tokens after the cache's; their keys and
  // values are appended to the cache. Runs without gradients. Same logits as forward() on the
  // whole sequence (for the new positions).
  Tensor forward(const IntTensor& idx, GPTCache& cache);
  // Mean cross-entropy of forward(idx) against targets (B, T) (ignore_index -1, as nanoGPT).
  Tensor loss(const IntTensor& idx, const IntTensor& targets);
  // Appends max_new_tokens tokens to idx (B, T0) using the KV cache: sampling from
  // softmax(logits / temperature) restricted to the top_k (0 = all), or greedy when
  // temperature == 0. The context is cropped to the last block_size tokens when it gets longer.
  // The same sampler as sample_rows (nn/sampling.h), which also offers top_p and streaming.
  IntTensor generate(const IntTensor& idx, int64_t max_new_tokens, double temperature, int64_t top_k, Generator& gen);

  // Keeps each layer's attention weights (B, H, T, T) after every forward (lessons, heat maps).
  void keep_attention(bool on);
  const Tensor& attention(int64_t layer) const { return h[static_cast<size_t>(layer)].attn.last_attention(); }
  const GPTConfig& config() const { return config_; }
  // The Generator that draws dropout masks (its state goes into checkpoints).
  Generator& dropout_rng() { return rng_; }
  std::string extra_repr() const override;

  // What enters block 1: drop(s * wte[idx] + positions) (B, T, C) at positions offset..offset+T-1.
  Tensor embed(const IntTensor& idx, int64_t offset = 0);

 private:
  Tensor head(const Tensor& x);  // (B, T, C) -> (B, T, V)

  GPTConfig config_;
  Generator rng_;

 public:
  ModuleDict transformer;
  Embedding wte;                 // (V, C)
  std::optional<Embedding> wpe;  // (block_size, C), learned positions only
  Dropout drop;
  ModuleList<SelfAttentionBlock> h;
  std::optional<LayerNorm> ln_f;  // Pre-LN only
  std::optional<Linear> lm_head;  // (V, C)

 private:
  InputEmbedding input_;  // s * wte[idx] + positions, shared with the Transformer (blocks.h)
};

}  // namespace sf
