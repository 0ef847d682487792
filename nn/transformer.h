// transformer.h: the encoder-decoder Transformer for sequence-to-sequence tasks (translation,
// copying, sorting), as in Vaswani et al. 2017 and The Annotated Transformer.
//
//   memory = encoder(src_embed(src) * sqrt(C) + PE)                      (B, S, C)
//   logits = generator(decoder(tgt_embed(tgt) * sqrt(C) + PE, memory))  (B, T, V)
//
// Parameter names: src_embed.weight, tgt_embed.weight (the same tensor when shared),
// src_pos / tgt_pos (learned positions only), encoder.layers.{i}.{ln_1, attn, ln_2, mlp},
// encoder.ln_f, decoder.layers.{i}.{ln_1, attn, ln_2, cross_attn, ln_3, mlp}, decoder.ln_f
// (ln_f only for Pre-LN), generator.weight (+ .bias unless tied to tgt_embed).
//
// Legend: B batch, S source length, T target length, C channels (d_model), H heads,
// D head size, V vocab.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "nn/blocks.h"
#include "nn/init.h"

namespace sf {

struct TransformerConfig {
  int64_t src_vocab_size = 1000;
  int64_t tgt_vocab_size = 1000;
  int64_t max_len = 256;  // the longest source or target sequence
  int64_t n_encoder_layers = 6;
  int64_t n_decoder_layers = 6;
  int64_t n_head = 8;
  int64_t d_model = 512;
  int64_t d_ff = 2048;  // 0 means 4 * d_model
  double dropout = 0.1;
  bool bias = true;
  bool shared_embeddings = false;                          // src and tgt use one table (needs equal vocab sizes)
  bool tied_head = false;                                  // generator.weight is tgt_embed.weight
  bool scale_embeddings = true;                            // multiply embeddings by sqrt(d_model), as the paper
  PosEncoding pos_encoding = PosEncoding::sinusoidal;      // sinusoidal | learned | rope | alibi | none
  NormPlacement norm = NormPlacement::pre;                 // pre | post
  Activation activation = Activation::relu;                // relu | gelu | gelu_tanh
  InitScheme init = InitScheme::xavier;                    // xavier | gpt2
  int64_t window = 0;                                      // > 0: sliding-window self-attention of this width
  AttentionKernel attention = AttentionKernel::automatic;  // stored | tiled | auto (autograd/ops_attention.h)
  int64_t n_kv_head = 0;  // key/value heads of self-attention; 0 means n_head (GQA / MQA)
  double ln_eps = 1e-5;
  double rope_base = 10000.0;
  uint64_t seed = 1337;

  // Throws ConfigError naming the first impossible field.
  void validate() const;
};

// Per-decoder-layer caches for incremental decoding.
struct TransformerCache {
  std::vector<KVCache> self, cross;
  int64_t length() const { return self.empty() ? 0 : self.front().length(); }
  void clear() { self.clear(), cross.clear(); }
};

class Transformer : public Module {
 public:
  explicit Transformer(const TransformerConfig& config);

  // src (B, S), tgt (B, T) ids; src_padding (B, S) / tgt_padding (B, T): 1 where the position is
  // padding, or undefined. -> logits (B, T, V) for the next target token at each position.
  Tensor forward(const IntTensor& src, const IntTensor& tgt, const Tensor& src_padding = Tensor(),
                 const Tensor& tgt_padding = Tensor());
  // The encoder alone: src (B, S) -> memory (B, S, C).
  Tensor encode(const IntTensor& src, const Tensor& src_padding = Tensor());
  // The decoder and generator: tgt (B, T) -> logits (B, T, V). With a cache, tgt holds only the
  // new tokens (no gradients are recorded then).
  Tensor decode(const IntTensor& tgt, const Tensor& memory, const Tensor& src_padding = Tensor(),
                const Tensor& tgt_padding = Tensor(), TransformerCache* cache = nullptr);
  // Greedy decoding with the KV cache: starts every row with bos, stops after max_len tokens or
  // when every row has produced eos. Returns (B, L) including bos.
  IntTensor greedy_decode(const IntTensor& src, const Tensor& src_padding, int32_t bos, int32_t eos, int64_t max_len);
  // 1.0 where ids == pad_id, else 0: a (B, T) key-padding mask.
  static Tensor padding_mask(const IntTensor& ids, int32_t pad_id);

  void keep_attention(bool on);
  const TransformerConfig& config() const { return config_; }
  Generator& generator_rng() { return rng_; }
  std::string extra_repr() const override;

 private:
  Tensor embed(const Embedding& table, const std::optional<Embedding>& pos_table, const IntTensor& ids,
               int64_t offset);  // (B, T, C)
  TransformerConfig config_;
  Generator rng_;
  InputEmbedding input_;  // s * embed[ids] + positions, shared with the GPT (blocks.h)

 public:
  Embedding src_embed;
  std::optional<Embedding> tgt_embed_own;     // absent when shared
  Embedding* tgt_embed;                       // src_embed or tgt_embed_own
  std::optional<Embedding> src_pos, tgt_pos;  // learned positions only
  Dropout drop;
  ModuleDict encoder, decoder;
  ModuleList<SelfAttentionBlock> encoder_layers;
  ModuleList<DecoderBlock> decoder_layers;
  std::optional<LayerNorm> encoder_ln_f, decoder_ln_f;  // Pre-LN only
  std::optional<Linear> generator;                      // (V, C)
};

}  // namespace sf
