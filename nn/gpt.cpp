// gpt.cpp: the GPT model: embeddings, a stack of causal blocks, the LM head, KV-cached decoding.
//
// Legend: B batch, T time, C channels (n_embd), H heads, D head size, V vocab.
#include "nn/gpt.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/errors.h"
#include "nn/init.h"

namespace sf {

static void require(bool ok, const std::string& message) {
  if (!ok) throw ConfigError("model: " + message);
}

void GPTConfig::validate() const {
  require(vocab_size > 0, "vocab_size must be positive, got " + std::to_string(vocab_size));
  require(block_size > 0, "block_size must be positive, got " + std::to_string(block_size));
  require(n_layer > 0, "n_layer must be positive, got " + std::to_string(n_layer));
  require(n_head > 0, "n_head must be positive, got " + std::to_string(n_head));
  require(n_embd > 0, "n_embd must be positive, got " + std::to_string(n_embd));
  require(n_embd % n_head == 0, "n_embd " + std::to_string(n_embd) + " is not divisible by n_head " +
                                    std::to_string(n_head));
  require(d_ff >= 0, "d_ff must be >= 0 (0 means 4 * n_embd), got " + std::to_string(d_ff));
  require(dropout >= 0 && dropout < 1, "dropout must be in [0, 1), got " + std::to_string(dropout));
  require(window >= 0, "window must be >= 0, got " + std::to_string(window));
  require(ln_eps > 0, "ln_eps must be positive");
  require(rope_base > 0, "rope_base must be positive");
  require(norm == "pre" || norm == "post", "norm must be \"pre\" or \"post\", got \"" + norm + "\"");
  PosEncoding pos = parse_pos_encoding(pos_encoding);
  require(pos != PosEncoding::rope || (n_embd / n_head) % 2 == 0,
          "pos_encoding rope needs an even head size n_embd / n_head, got " + std::to_string(n_embd / n_head));
  parse_activation(activation);
  parse_init(init);
}

static const GPTConfig& validated(const GPTConfig& c) {
  c.validate();
  return c;
}

static BlockConfig block_config(const GPTConfig& c) {
  BlockConfig b;
  b.d_model = c.n_embd;
  b.n_head = c.n_head;
  b.d_ff = c.d_ff;
  b.bias = c.bias;
  b.dropout = c.dropout;
  b.activation = parse_activation(c.activation);
  b.pre_ln = c.norm == "pre";
  b.ln_eps = c.ln_eps;
  b.pos = parse_pos_encoding(c.pos_encoding);
  b.rope_base = c.rope_base;
  b.window = c.window;
  return b;
}

GPT::GPT(const GPTConfig& config)
    : Module("GPT"),
      config_(validated(config)),
      rng_(config.seed),
      wte(config.vocab_size, config.n_embd),
      drop(config.dropout, &rng_),
      pos_(parse_pos_encoding(config.pos_encoding)) {
  const BlockConfig bc = block_config(config);
  register_module("transformer", transformer);
  transformer.add("wte", wte);
  if (pos_ == PosEncoding::learned) transformer.add("wpe", wpe.emplace(config.block_size, config.n_embd));
  transformer.add("drop", drop);
  transformer.add("h", h);
  for (int64_t i = 0; i < config.n_layer; ++i) h.append(std::make_unique<EncoderBlock>(bc, &rng_));
  if (bc.pre_ln) transformer.add("ln_f", ln_f.emplace(config.n_embd, config.ln_eps, config.bias));
  if (config.tied_head) lm_head.emplace(wte.weight);  // the same Tensor: one set of numbers
  else lm_head.emplace(config.n_embd, config.vocab_size, false);
  register_module("lm_head", *lm_head);

  Generator init_gen(config.seed);
  init_parameters(*this, parse_init(config.init), config.n_layer, init_gen);
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
         ", n_embd=" + std::to_string(config_.n_embd) + ", " + config_.pos_encoding + ", " +
         config_.norm + "-LN" + (config_.tied_head ? ", tied head" : "") +
         (config_.scale_embeddings ? ", embeddings * sqrt(C)" : "");
}

void GPT::keep_attention(bool on) {
  for (size_t i = 0; i < h.size(); ++i) h[i].attn.keep_attention(on);
}

Tensor GPT::embed(const IntTensor& idx, int64_t offset) {
  if (idx.shape.size() != 2)
    throw ShapeError("GPT: idx must be (B, T), got " + shape_str(Shape(idx.shape.begin(), idx.shape.end())));
  const int64_t T = idx.shape[1];
  if (offset + T > config_.block_size)
    throw ShapeError("GPT: sequence of length " + std::to_string(offset + T) + " exceeds block_size " +
                     std::to_string(config_.block_size));
  Tensor x = wte.forward(idx);  // (B, T, C)
  if (config_.scale_embeddings) x = x * std::sqrt(static_cast<double>(config_.n_embd));  // (B, T, C)
  if (pos_ == PosEncoding::learned) {
    IntTensor positions({T}, std::vector<int32_t>(static_cast<size_t>(T)));
    for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(offset + t);
    x = x + wpe->forward(positions);  // (B, T, C) + (T, C)
  } else if (pos_ == PosEncoding::sinusoidal) {
    if (!sinusoid_.defined() || sinusoid_.dtype() != x.dtype())
      sinusoid_ = sinusoidal_table(config_.block_size, config_.n_embd, 0, x.dtype());  // (block, C)
    x = x + slice(sinusoid_, 0, offset, offset + T);  // (B, T, C) + (T, C)
  }
  return drop.forward(x);  // (B, T, C)
}

Tensor GPT::head(const Tensor& x) {
  Tensor y = ln_f ? ln_f->forward(x) : x;  // (B, T, C)
  return lm_head->forward(y);              // (B, T, V)
}

Tensor GPT::forward(const IntTensor& idx) {
  Tensor x = embed(idx, 0);  // (B, T, C)
  AttnMask mask;
  mask.causal = true;
  for (size_t i = 0; i < h.size(); ++i) x = h[i].forward(x, mask);  // (B, T, C)
  return head(x);  // (B, T, V)
}

Tensor GPT::forward(const IntTensor& idx, GPTCache& cache) {
  NoGradGuard no_grad;
  if (cache.layers.size() != h.size()) cache.layers.assign(h.size(), KVCache());
  Tensor x = embed(idx, cache.length());  // (B, T, C) at positions past .. past+T-1
  AttnMask mask;
  mask.causal = true;
  for (size_t i = 0; i < h.size(); ++i) x = h[i].forward(x, mask, &cache.layers[i]);
  return head(x);  // (B, T, V)
}

Tensor GPT::loss(const IntTensor& idx, const IntTensor& targets) {
  return cross_entropy(forward(idx), targets, -1);
}

// Picks one token from a row of logits: argmax when temperature == 0, else a sample.
static int32_t pick(const double* logits, int64_t V, double temperature, int64_t top_k, Generator& gen) {
  if (temperature <= 0) return static_cast<int32_t>(std::max_element(logits, logits + V) - logits);
  std::vector<double> z(logits, logits + V);
  if (top_k > 0 && top_k < V) {  // keep the top_k largest, as nanoGPT
    std::vector<double> sorted = z;
    std::nth_element(sorted.begin(), sorted.begin() + (top_k - 1), sorted.end(), std::greater<double>());
    double kth = sorted[static_cast<size_t>(top_k - 1)];
    for (double& v : z)
      if (v < kth) v = -std::numeric_limits<double>::infinity();
  }
  double m = *std::max_element(z.begin(), z.end()), total = 0;
  for (double& v : z) total += (v = std::exp((v - m) / temperature));
  double r = gen.uniform() * total;
  for (int64_t i = 0; i < V; ++i) {
    r -= z[static_cast<size_t>(i)];
    if (r < 0) return static_cast<int32_t>(i);
  }
  return static_cast<int32_t>(V - 1);
}

IntTensor GPT::generate(const IntTensor& idx, int64_t max_new_tokens, double temperature,
                        int64_t top_k, Generator& gen) {
  if (idx.shape.size() != 2 || idx.shape[1] < 1) throw ShapeError("generate: idx must be (B, T) with T >= 1");
  const int64_t B = idx.shape[0], V = config_.vocab_size;
  std::vector<std::vector<int32_t>> seqs(static_cast<size_t>(B));
  for (int64_t b = 0; b < B; ++b)
    seqs[static_cast<size_t>(b)].assign(idx.data.begin() + b * idx.shape[1], idx.data.begin() + (b + 1) * idx.shape[1]);
  GPTCache cache;
  IntTensor next;  // what the model reads next: the whole (cropped) context, or one token
  auto feed_context = [&]() {
    int64_t len = static_cast<int64_t>(seqs[0].size()), T = std::min(len, config_.block_size);
    next = IntTensor({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
    for (int64_t b = 0; b < B; ++b)
      std::copy(seqs[static_cast<size_t>(b)].end() - T, seqs[static_cast<size_t>(b)].end(), next.data.begin() + b * T);
    cache.clear();
  };
  feed_context();
  for (int64_t step = 0; step < max_new_tokens; ++step) {
    Tensor logits = forward(next, cache);  // (B, T, V)
    const int64_t T = next.shape[1];
    std::vector<double> all = logits.to_vector();
    next = IntTensor({B, 1}, std::vector<int32_t>(static_cast<size_t>(B)));
    for (int64_t b = 0; b < B; ++b) {
      int32_t token = pick(all.data() + (b * T + T - 1) * V, V, temperature, top_k, gen);
      seqs[static_cast<size_t>(b)].push_back(token);
      next[b] = token;
    }
    if (cache.length() + 1 > config_.block_size) feed_context();  // slide the window: recompute
  }
  const int64_t L = static_cast<int64_t>(seqs[0].size());
  IntTensor out({B, L}, std::vector<int32_t>(static_cast<size_t>(B * L)));
  for (int64_t b = 0; b < B; ++b) std::copy(seqs[static_cast<size_t>(b)].begin(), seqs[static_cast<size_t>(b)].end(), out.data.begin() + b * L);
  return out;
}

}  // namespace sf
