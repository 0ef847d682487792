// transformer.cpp: the encoder-decoder Transformer and greedy decoding with a KV cache.
//
// Legend: B batch, S source length, T target length, C channels (d_model), H heads,
// D head size, V vocab.
#include "nn/transformer.h"

#include <algorithm>
#include <cmath>

#include "autograd/errors.h"
#include "nn/init.h"

namespace sf {

void TransformerConfig::validate() const {
  require(src_vocab_size > 0, "src_vocab_size must be positive, got " + std::to_string(src_vocab_size));
  require(tgt_vocab_size > 0, "tgt_vocab_size must be positive, got " + std::to_string(tgt_vocab_size));
  require(max_len > 0, "max_len must be positive, got " + std::to_string(max_len));
  require(n_encoder_layers > 0, "n_encoder_layers must be positive, got " + std::to_string(n_encoder_layers));
  require(n_decoder_layers > 0, "n_decoder_layers must be positive, got " + std::to_string(n_decoder_layers));
  require(!shared_embeddings || src_vocab_size == tgt_vocab_size,
          "shared_embeddings needs src_vocab_size == tgt_vocab_size");
  block_config_of(*this, d_model, "d_model");  // the settings every block shares
}

static const TransformerConfig& validated(const TransformerConfig& c) {
  c.validate();
  return c;
}

Transformer::Transformer(const TransformerConfig& config)
    : Module("Transformer"),
      config_(validated(config)),
      rng_(config.seed),
      input_(config.pos_encoding, config.max_len, config.d_model, config.scale_embeddings,
             {"Transformer", "ids", "max_len"}),
      src_embed(config.src_vocab_size, config.d_model),
      tgt_embed(&src_embed),
      drop(config.dropout, &rng_) {
  const BlockConfig bc = block_config_of(config, config.d_model, "d_model");
  const int64_t C = config.d_model;
  register_module("src_embed", src_embed);
  if (!config.shared_embeddings) tgt_embed = &tgt_embed_own.emplace(config.tgt_vocab_size, C);
  register_module("tgt_embed", *tgt_embed);  // shared: the same module under a second name
  if (config.pos_encoding == PosEncoding::learned) {
    register_module("src_pos", src_pos.emplace(config.max_len, C));
    register_module("tgt_pos", tgt_pos.emplace(config.max_len, C));
  }
  register_module("drop", drop);
  register_module("encoder", encoder);
  encoder.add("layers", encoder_layers);
  for (int64_t i = 0; i < config.n_encoder_layers; ++i)
    encoder_layers.append(std::make_unique<SelfAttentionBlock>(bc, &rng_));
  if (bc.norm == NormPlacement::pre) encoder.add("ln_f", encoder_ln_f.emplace(C, config.ln_eps, config.bias));
  register_module("decoder", decoder);
  decoder.add("layers", decoder_layers);
  for (int64_t i = 0; i < config.n_decoder_layers; ++i)
    decoder_layers.append(std::make_unique<DecoderBlock>(bc, &rng_));
  if (bc.norm == NormPlacement::pre) decoder.add("ln_f", decoder_ln_f.emplace(C, config.ln_eps, config.bias));
  if (config.tied_head) generator.emplace(tgt_embed->weight);
  else generator.emplace(C, config.tgt_vocab_size, config.bias);
  register_module("generator", *generator);

  Generator init_gen(config.seed);
  init_parameters(*this, config.init, std::max(config.n_encoder_layers, config.n_decoder_layers), init_gen);
  flatten_parameters();
}

std::string Transformer::extra_repr() const {
  return "d_model=" + std::to_string(config_.d_model) + ", heads=" + std::to_string(config_.n_head) +
         ", encoder=" + std::to_string(config_.n_encoder_layers) +
         ", decoder=" + std::to_string(config_.n_decoder_layers) + ", " + pos_encoding_name(config_.pos_encoding) +
         ", " + norm_name(config_.norm) + "-LN";
}

void Transformer::keep_attention(bool on) {
  for (size_t i = 0; i < encoder_layers.size(); ++i) encoder_layers[i].attn.keep_attention(on);
  for (size_t i = 0; i < decoder_layers.size(); ++i) {
    decoder_layers[i].attn.keep_attention(on);
    decoder_layers[i].cross_attn.keep_attention(on);
  }
}

Tensor Transformer::padding_mask(const IntTensor& ids, int32_t pad_id) {
  std::vector<double> mask(static_cast<size_t>(ids.numel()));
  for (int64_t i = 0; i < ids.numel(); ++i) mask[static_cast<size_t>(i)] = ids[i] == pad_id ? 1.0 : 0.0;
  return Tensor::from_vector(mask, Shape(ids.shape.begin(), ids.shape.end()));
}

Tensor Transformer::embed(const Embedding& table, const std::optional<Embedding>& pos_table, const IntTensor& ids,
                          int64_t offset) {
  return drop.forward(input_(table, pos_table ? &*pos_table : nullptr, ids, offset));  // (B, T, C)
}

Tensor Transformer::encode(const IntTensor& src, const Tensor& src_padding) {
  Tensor x = embed(src_embed, src_pos, src, 0);  // (B, S, C)
  AttentionMask mask;
  mask.key_padding = src_padding;
  for (size_t i = 0; i < encoder_layers.size(); ++i) x = encoder_layers[i].forward(x, mask);
  return encoder_ln_f ? encoder_ln_f->forward(x) : x;  // (B, S, C)
}

Tensor Transformer::decode(const IntTensor& tgt, const Tensor& memory, const Tensor& src_padding,
                           const Tensor& tgt_padding, TransformerCache* cache) {
  std::optional<NoGradGuard> no_grad;
  if (cache) {
    no_grad.emplace();
    if (cache->self.size() != decoder_layers.size()) {
      cache->self.assign(decoder_layers.size(), KVCache());
      cache->cross.assign(decoder_layers.size(), KVCache());
    }
  }
  Tensor x = embed(*tgt_embed, tgt_pos, tgt, cache ? cache->length() : 0);  // (B, T, C)
  for (size_t i = 0; i < decoder_layers.size(); ++i)
    x = decoder_layers[i].forward(x, memory, tgt_padding, src_padding, cache ? &cache->self[i] : nullptr,
                                  cache ? &cache->cross[i] : nullptr);  // (B, T, C)
  if (decoder_ln_f) x = decoder_ln_f->forward(x);
  return generator->forward(x);  // (B, T, V)
}

Tensor Transformer::forward(const IntTensor& src, const IntTensor& tgt, const Tensor& src_padding,
                            const Tensor& tgt_padding) {
  Tensor memory = encode(src, src_padding);              // (B, S, C)
  return decode(tgt, memory, src_padding, tgt_padding);  // (B, T, V)
}

IntTensor Transformer::greedy_decode(const IntTensor& src, const Tensor& src_padding, int32_t bos, int32_t eos,
                                     int64_t max_len) {
  NoGradGuard no_grad;
  if (src.shape.size() != 2) throw ShapeError("greedy_decode: src must be (B, S)");
  const int64_t B = src.shape[0], V = config_.tgt_vocab_size;
  max_len = std::min(max_len, config_.max_len);
  Tensor memory = encode(src, src_padding);  // (B, S, C)
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(B), std::vector<int32_t>{bos});
  std::vector<bool> done(static_cast<size_t>(B), false);
  TransformerCache cache;
  IntTensor next({B, 1}, std::vector<int32_t>(static_cast<size_t>(B), bos));
  for (int64_t step = 1; step < max_len; ++step) {
    std::vector<double> logits = decode(next, memory, src_padding, Tensor(), &cache).to_vector();  // (B, 1, V)
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      const double* row = logits.data() + b * V;
      int32_t token = done[static_cast<size_t>(b)] ? eos : static_cast<int32_t>(std::max_element(row, row + V) - row);
      out[static_cast<size_t>(b)].push_back(token);
      next[b] = token;
      if (token == eos) done[static_cast<size_t>(b)] = true;
      all_done = all_done && done[static_cast<size_t>(b)];
    }
    if (all_done) break;
  }
  const int64_t L = static_cast<int64_t>(out[0].size());
  IntTensor result({B, L}, std::vector<int32_t>(static_cast<size_t>(B * L)));
  for (int64_t b = 0; b < B; ++b)
    std::copy(out[static_cast<size_t>(b)].begin(), out[static_cast<size_t>(b)].end(), result.data.begin() + b * L);
  return result;
}

}  // namespace sf
