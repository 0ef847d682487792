// Lesson 10: the decoder block. Causal self-attention over the target so far, cross-attention
// to the encoder's memory, and the KV cache that makes generation cheap.
// Text: 10_decoder.md.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/lessons.h"
#include "nn/transformer.h"

namespace sf::lessons {

static const std::vector<std::string> kSource = {"我", "喜欢", "苹果"};
static const std::vector<std::string> kTarget = {"<s>", "I", "like", "apples"};

// [excerpt: cost]
// Multiply-adds in the matmuls of one decode call of an encoder-decoder Transformer: n new target
// tokens after `past` cached ones, S source tokens; memory_kv: the memory's keys and values are
// projected in this call (always without a cache, only on the first call with one).
struct Sizes { int64_t L, C, F, V, S; };
static int64_t decode_cost(const Sizes& z, int64_t n, int64_t past, bool memory_kv) {
  int64_t keys = past + n;
  int64_t per_layer = n * 4 * z.C * z.C          // self-attention q, k, v and output projections
                    + 2 * n * keys * z.C         // q k^T and p v, every key counted
                    + n * 2 * z.C * z.C          // cross-attention q and output projections
                    + (memory_kv ? z.S * 2 * z.C * z.C : 0)  // memory -> k, v
                    + 2 * n * z.S * z.C          // cross q k^T and p v
                    + n * 2 * z.C * z.F;         // feed-forward
  return z.L * per_layer + n * z.C * z.V;        // + the output projection to the vocabulary
}
// Generating T tokens: without a cache step t re-runs all t tokens; with one it runs only the new.
static int64_t cost_without_cache(const Sizes& z, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 1; t <= T; ++t) total += decode_cost(z, t, 0, true);
  return total;
}
static int64_t cost_with_cache(const Sizes& z, int64_t T) {
  int64_t total = 0;
  for (int64_t t = 1; t <= T; ++t) total += decode_cost(z, 1, t - 1, t == 1);
  return total;
}
// [/excerpt]

DecoderResult run_lesson_decoder(std::ostream& out) {
  DecoderResult r;

  heading(out, 1, "A small encoder-decoder: 我 喜欢 苹果 -> <s> I like apples");
  // [excerpt: model]
  TransformerConfig cfg;
  cfg.src_vocab_size = cfg.tgt_vocab_size = 8;
  cfg.d_model = 16;
  cfg.n_head = 2;
  cfg.d_ff = 32;
  cfg.n_encoder_layers = cfg.n_decoder_layers = 2;
  cfg.max_len = 16;
  cfg.dropout = 0.0;
  cfg.seed = 10;
  Transformer model(cfg);
  model.eval();
  IntTensor src({1, 3}, {3, 4, 5});      // 我 喜欢 苹果
  IntTensor tgt({1, 4}, {1, 3, 4, 5});   // <s> I like apples
  Tensor memory = model.encode(src);     // (B, S, C): what the decoder attends to
  // [/excerpt]
  out << "source ids [3, 4, 5] = 我 喜欢 苹果, target ids [1, 3, 4, 5] = <s> I like apples\n";
  out << "memory = encode(src): " << shape_str(memory.shape()) << "\n";
  out << "decoder layer 0: " << model.decoder_layers[0].summary();

  heading(out, 2, "Causal self-attention and cross-attention, layer 0, head 0");
  // [excerpt: attention]
  DecoderBlock& layer0 = model.decoder_layers[0];
  layer0.attn.keep_attention(true);
  layer0.cross_attn.keep_attention(true);
  Tensor logits = model.decode(tgt, memory);                  // (B, T, V)
  Tensor self_w = layer0.attn.last_attention();               // (B, H, T, T)
  Tensor cross_w = layer0.cross_attn.last_attention();        // (B, H, T, S)
  // [/excerpt]
  out << "self-attention: each target token sees itself and the tokens before it\n";
  heat_map(out, reshape(slice(self_w, 1, 0, 1), {16}).to_vector(), 4, 4, kTarget, kTarget);
  show(out, "self-attention weights, head 0", reshape(slice(self_w, 1, 0, 1), {4, 4}), 3);
  out << "cross-attention: each target token looks at every source token\n";
  heat_map(out, reshape(slice(cross_w, 1, 0, 1), {12}).to_vector(), 4, 3, kTarget, kSource);
  show(out, "cross-attention weights, head 0", reshape(slice(cross_w, 1, 0, 1), {4, 3}), 3);
  r.self_weights = reshape(slice(self_w, 1, 0, 1), {16}).to_vector();
  r.cross_weights = reshape(slice(cross_w, 1, 0, 1), {12}).to_vector();
  layer0.attn.keep_attention(false);
  layer0.cross_attn.keep_attention(false);

  heading(out, 3, "The KV cache: one new token per call, the same logits");
  // [excerpt: cache]
  TransformerCache cache;
  std::vector<Tensor> step_logits;
  for (int64_t t = 0; t < 4; ++t) {
    IntTensor one({1, 1}, {tgt[t]});                                      // only the new token
    step_logits.push_back(model.decode(one, memory, Tensor(), Tensor(), &cache));  // (B, 1, V)
  }
  Tensor incremental = concat(step_logits, 1);                            // (B, T, V)
  // [/excerpt]
  out << "after 4 calls the cache holds, per decoder layer:\n"
      << "  self-attention k, v: " << shape_str(cache.self[0].k.shape()) << " (B, H, T, D), one row added per call\n"
      << "  cross-attention k, v: " << shape_str(cache.cross[0].k.shape())
      << " (B, H, S, D), computed on the first call and reused\n";
  r.cache_vs_full = max_abs_diff(incremental.to_vector(), logits.to_vector());
  show(out, "logits for 'apples' (recomputed)", reshape(slice(logits, 1, 3, 4), {8}).detach(), 4);
  show(out, "logits for 'apples' (cached)    ", reshape(slice(incremental, 1, 3, 4), {8}), 4);
  out << "largest |cached - recomputed| over all positions: "
      << (r.cache_vs_full < 1e-5 ? "below 1e-5 (float32 rounding: the sums run in another order)"
                                 : fmt(r.cache_vs_full, 7))
      << "\n";

  heading(out, 4, "What the cache saves: multiply-adds in the matmuls");
  Sizes tiny{cfg.n_decoder_layers, cfg.d_model, cfg.d_ff, cfg.tgt_vocab_size, 3};
  Sizes base{6, 512, 2048, 32000, 50};  // the base Transformer, 50 source tokens
  r.tiny_without = cost_without_cache(tiny, 4);
  r.tiny_with = cost_with_cache(tiny, 4);
  r.base_without = cost_without_cache(base, 50);
  r.base_with = cost_with_cache(base, 50);
  auto row = [&](const char* what, int64_t without, int64_t with) {
    out << "  " << what << ": without cache " << format_count(without) << ", with cache "
        << format_count(with) << " (" << fmt(static_cast<double>(without) / static_cast<double>(with), 1)
        << "x fewer)\n";
  };
  row("this model, 4 tokens          ", r.tiny_without, r.tiny_with);
  row("base Transformer, 50 tokens   ", r.base_without, r.base_with);
  out << "without a cache step t redoes the work of steps 1..t-1, so generating T tokens costs\n"
         "about T^2 / 2 token passes instead of T; the cache trades that for memory:\n"
         "2 * L * T * C numbers for the self-attention keys and values.\n";
  return r;
}

}  // namespace sf::lessons
