// gpt.cpp: the GPT model: embeddings, a stack of causal blocks, the LM head, KV-cached decoding.
//
// Legend: B batch, T time, C channels (n_embd), H heads, D head size, V vocab.
#include "nn/gpt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "autograd/checkpoint.h"
#include "autograd/errors.h"
#include "nn/init.h"
#include "nn/sampling.h"

namespace sf {

int64_t kv_cache_bytes_per_token(const GPTConfig& config, DType dtype) {
  config.validate();
  return config.n_layer *
         kv_cache_bytes_per_token(self_attention_config(block_config_of(config, config.n_embd, "n_embd")), dtype);
}

void GPTConfig::validate() const {
  require(vocab_size > 0, "vocab_size must be positive, got " + std::to_string(vocab_size));
  require(block_size > 0, "block_size must be positive, got " + std::to_string(block_size));
  require(n_layer > 0, "n_layer must be positive, got " + std::to_string(n_layer));
  block_config_of(*this, n_embd, "n_embd");  // the settings every block shares
  std::ostringstream p;
  p << dropout;
  require(!recompute || dropout == 0.0,
          "recompute needs dropout 0 (recomputing a block would draw new dropout masks), got dropout " + p.str());
}

static const GPTConfig& validated(const GPTConfig& c) {
  c.validate();
  return c;
}

GPT::GPT(const GPTConfig& config)
    : Module("GPT"),
      config_(validated(config)),
      rng_(config.seed),
      wte(config.vocab_size, config.n_embd),
      drop(config.dropout, &rng_),
      input_(config.pos_encoding, config.block_size, config.n_embd, config.scale_embeddings,
             {"GPT", "idx", "block_size"}) {
  const BlockConfig bc = block_config_of(config, config.n_embd, "n_embd");
  register_module("transformer", transformer);
  transformer.add("wte", wte);
  if (config.pos_encoding == PosEncoding::learned)
    transformer.add("wpe", wpe.emplace(config.block_size, config.n_embd));
  transformer.add("drop", drop);
  transformer.add("h", h);
  for (int64_t i = 0; i < config.n_layer; ++i) h.append(std::make_unique<SelfAttentionBlock>(bc, &rng_));
  if (bc.norm == NormPlacement::pre) transformer.add("ln_f", ln_f.emplace(config.n_embd, config.ln_eps, config.bias));
  if (config.tied_head) lm_head.emplace(wte.weight);  // the same Tensor: one set of numbers
  else lm_head.emplace(config.n_embd, config.vocab_size, false);
  register_module("lm_head", *lm_head);

  Generator init_gen(config.seed);
  init_parameters(*this, config.init, config.n_layer, init_gen);
  if (config.scale_embeddings) {  // N(0, 1/C): times sqrt(C) in embed(), unit-variance elements
    const double std = 1.0 / std::sqrt(static_cast<double>(config.n_embd));
    dispatch(wte.weight.dtype(), [&](auto tag) {
      using Tp = decltype(tag);
      Tp* w = wte.weight.template data<Tp>();
      for (int64_t i = 0; i < wte.weight.numel(); ++i) w[i] = static_cast<Tp>(std * init_gen.normal());
    });
  }
  flatten_parameters();
}

std::string GPT::extra_repr() const {
  return "vocab=" + std::to_string(config_.vocab_size) + ", block=" + std::to_string(config_.block_size) +
         ", layers=" + std::to_string(config_.n_layer) + ", heads=" + std::to_string(config_.n_head) +
         ", n_embd=" + std::to_string(config_.n_embd) + ", " + pos_encoding_name(config_.pos_encoding) + ", " +
         norm_name(config_.norm) + "-LN" + (config_.tied_head ? ", tied head" : "") +
         (config_.scale_embeddings ? ", embeddings * sqrt(C)" : "");
}

void GPT::keep_attention(bool on) {
  for (size_t i = 0; i < h.size(); ++i) h[i].attn.keep_attention(on);
}

Tensor GPT::embed(const IntTensor& idx, int64_t offset) {
  return drop.forward(input_(wte, wpe ? &*wpe : nullptr, idx, offset));  // (B, T, C)
}

Tensor GPT::head(const Tensor& x) {
  Tensor y = ln_f ? ln_f->forward(x) : x;  // (B, T, C)
  return lm_head->forward(y);              // (B, T, V)
}

Tensor GPT::forward(const IntTensor& idx) {
  Tensor x = embed(idx, 0);  // (B, T, C)
  AttentionMask mask;
  mask.causal = true;
  for (size_t i = 0; i < h.size(); ++i) {
    if (!config_.recompute) {
      x = h[i].forward(x, mask);  // (B, T, C)
      continue;
    }
    // Each half of the block is recomputed on its own, so its backward holds the activations of
    // one sublayer (attention, or the MLP with its 4C-wide hidden layer), never of both.
    SelfAttentionBlock& block = h[i];
    auto attention = [&block, mask](const Tensor& in) { return block.attention_half(in, mask); };
    auto mlp = [&block](const Tensor& in) { return block.mlp_half(in); };
    x = checkpoint(attention, x, block.attention_half_parameters());  // (B, T, C), only x kept for backward
    x = checkpoint(mlp, x, block.mlp_half_parameters());              // (B, T, C), likewise
  }
  return head(x);  // (B, T, V)
}

Tensor GPT::forward(const IntTensor& idx, GPTCache& cache) {
  NoGradGuard no_grad;
  if (cache.layers.size() != h.size()) cache.layers.assign(h.size(), KVCache());
  Tensor x = embed(idx, cache.length());  // (B, T, C) at positions past .. past+T-1
  AttentionMask mask;
  mask.causal = true;
  for (size_t i = 0; i < h.size(); ++i) x = h[i].forward(x, mask, &cache.layers[i]);
  return head(x);  // (B, T, V)
}

Tensor GPT::loss(const IntTensor& idx, const IntTensor& targets) { return cross_entropy(forward(idx), targets, -1); }

IntTensor GPT::generate(const IntTensor& idx, int64_t max_new_tokens, double temperature, int64_t top_k,
                        Generator& gen) {
  if (idx.shape.size() != 2 || idx.shape[1] < 1) throw ShapeError("generate: idx must be (B, T) with T >= 1");
  const int64_t B = idx.shape[0], T0 = idx.shape[1];
  std::vector<std::vector<int32_t>> rows(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b)
    rows[static_cast<size_t>(b)].assign(idx.data.begin() + b * T0, idx.data.begin() + (b + 1) * T0);
  SampleOptions o;
  o.max_new_tokens = max_new_tokens;
  o.temperature = temperature;
  o.top_k = top_k;
  rows = sample_rows(*this, std::move(rows), o, gen);
  const int64_t L = T0 + max_new_tokens;
  IntTensor out({B, L}, std::vector<int32_t>(static_cast<size_t>(B * L)));
  for (int64_t b = 0; b < B; ++b)
    std::copy(rows[static_cast<size_t>(b)].begin(), rows[static_cast<size_t>(b)].end(), out.data.begin() + b * L);
  return out;
}

}  // namespace sf
