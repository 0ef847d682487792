// blocks.cpp: SelfAttentionBlock and DecoderBlock with Pre-LN / Post-LN residuals.
//
// Legend: B batch, T time, S memory length, C channels, H heads, D head size.
#include "nn/blocks.h"

#include <cmath>
#include <string>

#include "autograd/errors.h"
#include "autograd/names.h"
#include "nn/heads.h"

namespace sf {

static AttentionConfig attention_config(const BlockConfig& c, bool cross) {
  AttentionConfig a;
  a.d_model = c.d_model;
  a.n_head = c.n_head;
  a.bias = c.bias;
  a.dropout = c.dropout;
  a.cross = cross;
  a.pos = cross ? PosEncoding::none : c.pos;  // positions act on self-attention only
  a.rope_base = c.rope_base;
  a.kernel = c.attention;
  a.n_kv_head = cross ? 0 : c.n_kv_head;  // cross-attention keeps all heads
  return a;
}

AttentionConfig self_attention_config(const BlockConfig& c) { return attention_config(c, /*cross=*/false); }
AttentionConfig cross_attention_config(const BlockConfig& c) { return attention_config(c, /*cross=*/true); }

void require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("model: " + message);
}

void validate(const BlockConfig& c, const char* width) {
  const std::string w = width;
  const std::string broken = head_rule_error(c.d_model, c.n_head, c.n_kv_head, c.pos == PosEncoding::rope, w);
  require(broken.empty(), broken);
  require(c.d_ff >= 0, "d_ff must be >= 0 (0 means 4 * " + w + "), got " + std::to_string(c.d_ff));
  require(c.dropout >= 0 && c.dropout < 1, "dropout must be in [0, 1), got " + std::to_string(c.dropout));
  require(c.window >= 0, "window must be >= 0, got " + std::to_string(c.window));
  require(c.ln_eps > 0, "ln_eps must be positive");
  require(c.rope_base > 0, "rope_base must be positive");
}

const char* norm_name(NormPlacement norm) { return name_of(kNorms, norm); }

// A block validates its whole config when it is built (lessons build blocks directly), then keeps
// the window it needs at forward time.
static int64_t window_of_validated(const BlockConfig& c) {
  validate(c);
  return c.window;
}

// ---- SelfAttentionBlock ----
SelfAttentionBlock::SelfAttentionBlock(const BlockConfig& c, Generator* gen)
    : Module("SelfAttentionBlock"),
      ln_1(c.d_model, c.ln_eps, c.bias),
      attn(self_attention_config(c), gen),
      ln_2(c.d_model, c.ln_eps, c.bias),
      mlp(c.d_model, c.d_ff, c.activation, c.bias, c.dropout, gen),
      norm_(c.norm),
      window_(window_of_validated(c)) {
  register_module("ln_1", ln_1);
  register_module("attn", attn);
  register_module("ln_2", ln_2);
  register_module("mlp", mlp);
}

Tensor SelfAttentionBlock::forward(const Tensor& x, const AttentionMask& mask, KVCache* cache) {
  Tensor h = attention_half(x, mask, cache);  // (B, T, C)
  return mlp_half(h);                         // (B, T, C)
}

Tensor SelfAttentionBlock::attention_half(const Tensor& x, const AttentionMask& mask, KVCache* cache) {
  AttentionMask m = mask;
  if (window_ > 0) m.window = window_;
  if (norm_ == NormPlacement::pre) return x + attn.forward(ln_1.forward(x), m, cache);  // (B, T, C)
  return ln_1.forward(x + attn.forward(x, m, cache));                                   // (B, T, C)
}

Tensor SelfAttentionBlock::mlp_half(const Tensor& h) {
  if (norm_ == NormPlacement::pre) return h + mlp.forward(ln_2.forward(h));  // (B, T, C)
  return ln_2.forward(h + mlp.forward(h));                                   // (B, T, C)
}

static std::vector<Tensor> parameters_of(const Module& a, const Module& b) {
  std::vector<Tensor> p = a.parameters(), q = b.parameters();
  p.insert(p.end(), q.begin(), q.end());
  return p;
}

std::vector<Tensor> SelfAttentionBlock::attention_half_parameters() const { return parameters_of(ln_1, attn); }
std::vector<Tensor> SelfAttentionBlock::mlp_half_parameters() const { return parameters_of(ln_2, mlp); }

// ---- DecoderBlock ----
DecoderBlock::DecoderBlock(const BlockConfig& c, Generator* gen)
    : Module("DecoderBlock"),
      ln_1(c.d_model, c.ln_eps, c.bias),
      attn(self_attention_config(c), gen),
      ln_2(c.d_model, c.ln_eps, c.bias),
      cross_attn(cross_attention_config(c), gen),
      ln_3(c.d_model, c.ln_eps, c.bias),
      mlp(c.d_model, c.d_ff, c.activation, c.bias, c.dropout, gen),
      norm_(c.norm),
      window_(window_of_validated(c)) {
  register_module("ln_1", ln_1);
  register_module("attn", attn);
  register_module("ln_2", ln_2);
  register_module("cross_attn", cross_attn);
  register_module("ln_3", ln_3);
  register_module("mlp", mlp);
}

Tensor DecoderBlock::forward(const Tensor& x, const Tensor& memory, const Tensor& tgt_padding,
                             const Tensor& memory_padding, KVCache* self_cache, KVCache* cross_cache) {
  AttentionMask m;
  m.causal = true;
  m.window = window_;
  m.key_padding = tgt_padding;
  if (norm_ == NormPlacement::pre) {
    Tensor h = x + attn.forward(ln_1.forward(x), m, self_cache);                             // (B, T, C)
    h = h + cross_attn.forward_cross(ln_2.forward(h), memory, memory_padding, cross_cache);  // (B, T, C)
    return h + mlp.forward(ln_3.forward(h));                                                 // (B, T, C)
  }
  Tensor h = ln_1.forward(x + attn.forward(x, m, self_cache));                             // (B, T, C)
  h = ln_2.forward(h + cross_attn.forward_cross(h, memory, memory_padding, cross_cache));  // (B, T, C)
  return ln_3.forward(h + mlp.forward(h));                                                 // (B, T, C)
}

// ---- InputEmbedding ----
InputEmbedding::InputEmbedding(PosEncoding pos, int64_t max_len, int64_t C, bool scale, Names names)
    : pos_(pos), max_len_(max_len), C_(C), scale_(scale), names_(names) {}

Tensor InputEmbedding::operator()(const Embedding& tokens, const Embedding* positions, const IntTensor& ids,
                                  int64_t offset) {
  if (ids.shape.size() != 2)
    throw ShapeError(std::string(names_.model) + ": " + names_.ids + " must be (B, T), got " +
                     shape_str(Shape(ids.shape.begin(), ids.shape.end())));
  const int64_t T = ids.shape[1];
  if (offset + T > max_len_)
    throw ShapeError(std::string(names_.model) + ": sequence of length " + std::to_string(offset + T) + " exceeds " +
                     names_.limit + " " + std::to_string(max_len_));
  Tensor x = tokens.forward(ids);                          // (B, T, C)
  if (scale_) x = x * std::sqrt(static_cast<double>(C_));  // (B, T, C)
  if (pos_ == PosEncoding::learned) {
    IntTensor at({T}, std::vector<int32_t>(static_cast<size_t>(T)));
    for (int64_t t = 0; t < T; ++t) at[t] = static_cast<int32_t>(offset + t);
    x = x + positions->forward(at);  // (B, T, C) + (T, C)
  } else if (pos_ == PosEncoding::sinusoidal) {
    if (!sinusoid_.defined() || sinusoid_.dtype() != x.dtype())
      sinusoid_ = sinusoidal_table(max_len_, C_, 0, x.dtype());  // (max_len, C)
    x = x + slice(sinusoid_, 0, offset, offset + T);             // (B, T, C) + (T, C)
  }
  return x;
}

}  // namespace sf
