// models.cpp: config -> model configs.
#include "train/models.h"

namespace sf {

// The fields the GPT and the Transformer share (the same names in both configs).
template <class ModelConfigOut>
static void set_shared_fields(const Config& c, ModelConfigOut& out) {
  const ModelConfig& m = c.model;
  out.n_head = m.n_head;
  out.d_ff = m.d_ff;
  out.dropout = m.dropout;
  out.bias = m.bias;
  out.tied_head = m.tie_weights;
  out.pos_encoding = m.pos_encoding;
  out.norm = m.norm;
  out.activation = m.activation;
  out.init = m.init;
  out.window = m.window;
  out.attention = m.attention;
  out.n_kv_head = m.n_kv_head;
  out.seed = static_cast<uint64_t>(c.train.seed);
}

GPTConfig gpt_config_of(const Config& c, int64_t vocab_size) {
  GPTConfig g;
  set_shared_fields(c, g);
  g.vocab_size = vocab_size;
  g.block_size = c.model.block_size;
  g.n_layer = c.model.n_layer;
  g.n_embd = c.model.n_embd;
  g.scale_embeddings = c.model.scale_embeddings;
  g.recompute = c.model.recompute;
  return g;
}

TransformerConfig transformer_config_of(const Config& c, int64_t vocab_size) {
  require(!c.model.recompute, "recompute is for \"gpt\" models only; the \"transformer\" has no recomputation");
  TransformerConfig t;
  set_shared_fields(c, t);
  t.src_vocab_size = t.tgt_vocab_size = vocab_size;
  t.max_len = c.model.block_size;
  t.n_encoder_layers = c.model.n_layer;
  t.n_decoder_layers = c.model.n_decoder_layer ? c.model.n_decoder_layer : c.model.n_layer;
  t.d_model = c.model.n_embd;
  t.shared_embeddings = true;  // one vocabulary for sources and targets
  return t;
}

}  // namespace sf
