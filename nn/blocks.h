// blocks.h: the two transformer layers, each a pair of residual sublayers.
//
//   SelfAttentionBlock:  x -> x + SelfAttention(x) -> x + FeedForward(x)
//   DecoderBlock:        x -> x + CausalSelfAttention(x) -> x + CrossAttention(x, memory) -> x + FFN(x)
//
// A SelfAttentionBlock is the encoder's layer (no mask, or a padding mask) and, with a causal
// mask, the GPT's (nanoGPT's Block: ln_1, attn, ln_2, mlp). The DecoderBlock adds cross-attention
// to the encoder's output. Where the LayerNorm goes is a switch:
//   Post-LN (Vaswani et al. 2017):  x = LN(x + f(x))      the original; needs warm-up to train
//   Pre-LN  (GPT-2, Xiong et al.):  x = x + f(LN(x))      trains stably; the stack then ends
//                                                         with one more LayerNorm (ln_f)
//
// Legend: B batch, T time, S memory length, C channels, H heads, D head size.
#pragma once
#include <array>
#include <vector>

#include "autograd/names.h"
#include "nn/attention.h"
#include "nn/layers.h"

namespace sf {

// Where a block's LayerNorms sit: "pre" (x + f(LN(x)), GPT-2) or "post" (LN(x + f(x)), Vaswani
// et al.). The config reads model.norm through kNorms (train/options.h).
enum class NormPlacement { pre, post };
inline constexpr std::array<Named<NormPlacement>, 2> kNorms = {
    {{"pre", NormPlacement::pre}, {"post", NormPlacement::post}}};
const char* norm_name(NormPlacement norm);

// Throws ConfigError("model: " + message) unless ok: the one form of a model config's checks.
void require(bool ok, const std::string& message);

struct BlockConfig {
  int64_t d_model = 0;  // C
  int64_t n_head = 1;   // H
  int64_t d_ff = 0;     // FeedForward hidden size F; 0 means 4 C
  bool bias = true;     // biases in Linear and LayerNorm (nanoGPT's `bias`)
  double dropout = 0.0;
  Activation activation = Activation::gelu;
  NormPlacement norm = NormPlacement::pre;  // pre: x + f(LN(x)); post: LN(x + f(x))
  double ln_eps = 1e-5;
  PosEncoding pos = PosEncoding::none;  // rope / alibi are applied inside self-attention
  double rope_base = 10000.0;
  int64_t window = 0;                                      // > 0: sliding-window self-attention of this width
  AttentionKernel attention = AttentionKernel::automatic;  // the fused attention kernel
  int64_t n_kv_head = 0;  // key/value heads of self-attention (GQA / MQA); 0 means n_head
};

// Throws ConfigError ("model: ...") naming the first impossible setting; `width` is what the
// model calls d_model ("n_embd" for the GPT). The blocks' constructors call it too.
void validate(const BlockConfig& c, const char* width = "d_model");

// The block settings that the GPT and the encoder-decoder Transformer share, read from their
// configs' fields of the same names (n_head, d_ff, bias, dropout, activation, norm, ln_eps,
// pos_encoding, rope_base, window, attention, n_kv_head) and validated: the one place that maps
// them to a BlockConfig. The options are enums already: the config boundary
// (train/models.cpp) parsed their names.
template <class ModelConfig>
BlockConfig block_config_of(const ModelConfig& m, int64_t d_model, const char* width) {
  BlockConfig b;
  b.d_model = d_model;
  b.n_head = m.n_head;
  b.d_ff = m.d_ff;
  b.bias = m.bias;
  b.dropout = m.dropout;
  b.activation = m.activation;
  b.norm = m.norm;
  b.ln_eps = m.ln_eps;
  b.pos = m.pos_encoding;
  b.rope_base = m.rope_base;
  b.window = m.window;
  b.attention = m.attention;
  b.n_kv_head = m.n_kv_head;
  validate(b, width);
  return b;
}

// The attention config of a block's self-attention and of its cross-attention.
AttentionConfig self_attention_config(const BlockConfig& c);
AttentionConfig cross_attention_config(const BlockConfig& c);

class SelfAttentionBlock : public Module {
 public:
  explicit SelfAttentionBlock(const BlockConfig& config, Generator* gen = nullptr);
  // x (B, T, C) -> (B, T, C): mlp_half(attention_half(x, mask, cache)). `mask` says which keys
  // each query sees (causal for a GPT); the block's sliding window, if any, is added to it.
  // cache: see MultiHeadAttention.
  Tensor forward(const Tensor& x, const AttentionMask& mask = {}, KVCache* cache = nullptr);

  // The block's two residual sublayers, each with its add (and its LayerNorm), so that a model
  // can run (and recompute, autograd/checkpoint.h) them one at a time:
  //   attention_half:  Pre-LN x + attn(ln_1(x))    Post-LN ln_1(x + attn(x))
  //   mlp_half:        Pre-LN h + mlp(ln_2(h))     Post-LN ln_2(h + mlp(h))
  Tensor attention_half(const Tensor& x, const AttentionMask& mask = {}, KVCache* cache = nullptr);  // (B, T, C)
  Tensor mlp_half(const Tensor& h);                                                                  // (B, T, C)
  // The parameters each half reads: ln_1's and attn's, ln_2's and mlp's.
  std::vector<Tensor> attention_half_parameters() const;
  std::vector<Tensor> mlp_half_parameters() const;
  std::string extra_repr() const override { return std::string(norm_name(norm_)) + "-LN"; }

  LayerNorm ln_1;
  MultiHeadAttention attn;
  LayerNorm ln_2;
  FeedForward mlp;

 private:
  NormPlacement norm_;
  int64_t window_;
};

class DecoderBlock : public Module {
 public:
  explicit DecoderBlock(const BlockConfig& config, Generator* gen = nullptr);
  // x (B, T, C), memory (B, S, C) from the encoder -> (B, T, C). Self-attention is causal;
  // tgt_padding (B, T) masks padded target keys, memory_padding (B, S) padded source keys.
  // With caches, x holds only the new target tokens (incremental decoding).
  Tensor forward(const Tensor& x, const Tensor& memory, const Tensor& tgt_padding = Tensor(),
                 const Tensor& memory_padding = Tensor(), KVCache* self_cache = nullptr,
                 KVCache* cross_cache = nullptr);
  std::string extra_repr() const override { return std::string(norm_name(norm_)) + "-LN"; }

  LayerNorm ln_1;
  MultiHeadAttention attn;  // causal self-attention
  LayerNorm ln_2;
  MultiHeadAttention cross_attn;  // queries from x, keys and values from memory
  LayerNorm ln_3;
  FeedForward mlp;

 private:
  NormPlacement norm_;
  int64_t window_;
};

// What GPT and Transformer feed their first block, written once for both: the token vectors
// (times sqrt(C) when `scale` is on) plus the position signal of positions offset .. offset + T - 1,
// a learned table or the sinusoidal one (computed once, in the input's dtype). RoPE, ALiBi and
// none add nothing here (the first two act inside attention). Not a Module: the tables it reads
// belong to the model, which also applies its dropout to the result.
class InputEmbedding {
 public:
  struct Names {
    const char* model;  // "GPT": how errors name the model,
    const char* ids;    // "idx": its argument,
    const char* limit;  // "block_size": and its length field
  };
  InputEmbedding(PosEncoding pos, int64_t max_len, int64_t C, bool scale, Names names);
  // ids (B, T) -> (B, T, C). `positions` is the learned table (max_len, C); only read for
  // PosEncoding::learned. Throws ShapeError when ids is not (B, T) or offset + T > max_len.
  Tensor operator()(const Embedding& tokens, const Embedding* positions, const IntTensor& ids, int64_t offset);

 private:
  PosEncoding pos_;
  int64_t max_len_, C_;
  bool scale_;
  Names names_;
  Tensor sinusoid_;  // (max_len, C), for PosEncoding::sinusoidal
};

}  // namespace sf
