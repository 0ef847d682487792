// Lesson 12: the decoder block. Causal self-attention over the target so far, cross-attention
// to the encoder's memory, and the KV cache that makes generation cheap.
// Text: decoder.md.
#include <algorithm>
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/common/diagrams.h"
#include "lessons/common/pictures.h"
#include "lessons/decoder.h"
#include "nn/transformer.h"

namespace sf::lessons {

static const std::vector<std::string> kSource = {"我", "喜欢", "苹果"};
static const std::vector<std::string> kTarget = {"<s>", "I", "like", "apples"};

// [excerpt: cost]
// Multiply-adds in the matmuls of one decode call of an encoder-decoder Transformer: n new target
// tokens after `past` cached ones, S source tokens; memory_kv: the memory's keys and values are
// projected in this call (always without a cache, only on the first call with one).
struct Sizes {
  int64_t L, C, F, V, S;
};
static int64_t decode_cost(const Sizes& z, int64_t n, int64_t past, bool memory_kv) {
  int64_t keys = past + n;
  int64_t per_layer = n * 4 * z.C * z.C                        // self-attention q, k, v and output projections
                      + 2 * n * keys * z.C                     // q k^T and p v, every key counted
                      + n * 2 * z.C * z.C                      // cross-attention q and output projections
                      + (memory_kv ? z.S * 2 * z.C * z.C : 0)  // memory -> k, v
                      + 2 * n * z.S * z.C                      // cross q k^T and p v
                      + n * 2 * z.C * z.F;                     // feed-forward
  return z.L * per_layer + n * z.C * z.V;                      // + the output projection to the vocabulary
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

  heading(out, 1, "A small encoder-decoder: 我 喜欢 苹果 -> <s> I like apples",
          "一个小小的编码器-解码器：我 喜欢 苹果 -> <s> I like apples");
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
  IntTensor src({1, 3}, {3, 4, 5});     // 我 喜欢 苹果
  IntTensor tgt({1, 4}, {1, 3, 4, 5});  // <s> I like apples
  Tensor memory = model.encode(src);    // (B, S, C): what the decoder attends to
  // [/excerpt]
  out << tr(out, "source ids [3, 4, 5] = 我 喜欢 苹果, target ids [1, 3, 4, 5] = <s> I like apples\n",
            "源序列 ids [3, 4, 5] = 我 喜欢 苹果，目标序列 ids [1, 3, 4, 5] = <s> I like apples\n");
  out << "memory = encode(src): " << shape_str(memory.shape()) << "\n";
  out << tr(out, "decoder layer 0: ", "解码器第 0 层：") << model.decoder_layers[0].summary();

  heading(out, 2, "Causal self-attention and cross-attention, layer 0, head 0",
          "因果自注意力与交叉注意力，第 0 层，头 0");
  // [excerpt: attention]
  DecoderBlock& layer0 = model.decoder_layers[0];
  layer0.attn.keep_attention(true);
  layer0.cross_attn.keep_attention(true);
  Tensor logits = model.decode(tgt, memory);            // (B, T, V)
  Tensor self_w = layer0.attn.last_attention();         // (B, H, T, T)
  Tensor cross_w = layer0.cross_attn.last_attention();  // (B, H, T, S)
  // [/excerpt]
  out << tr(out, "self-attention: each target token sees itself and the tokens before it\n",
            "自注意力：每个目标词元只能看到自己和它前面的词元\n");
  heat_map(out, reshape(slice(self_w, 1, 0, 1), {16}).to_vector(), 4, 4, kTarget, kTarget);
  show(out, tr(out, "self-attention weights, head 0", "自注意力权重，头 0"), reshape(slice(self_w, 1, 0, 1), {4, 4}),
       3);
  out << tr(out, "cross-attention: each target token looks at every source token\n",
            "交叉注意力：每个目标词元都看全部源词元\n");
  heat_map(out, reshape(slice(cross_w, 1, 0, 1), {12}).to_vector(), 4, 3, kTarget, kSource);
  show(out, tr(out, "cross-attention weights, head 0", "交叉注意力权重，头 0"),
       reshape(slice(cross_w, 1, 0, 1), {4, 3}), 3);
  r.self_weights = reshape(slice(self_w, 1, 0, 1), {16}).to_vector();
  r.cross_weights = reshape(slice(cross_w, 1, 0, 1), {12}).to_vector();
  layer0.attn.keep_attention(false);
  layer0.cross_attn.keep_attention(false);

  heading(out, 3, "The KV cache: one new token per call, the same logits",
          "KV 缓存：每次调用只算一个新词元，logits 不变");
  // [excerpt: cache]
  TransformerCache cache;
  std::vector<Tensor> step_logits;
  for (int64_t t = 0; t < 4; ++t) {
    IntTensor one({1, 1}, {tgt[t]});                                               // only the new token
    step_logits.push_back(model.decode(one, memory, Tensor(), Tensor(), &cache));  // (B, 1, V)
  }
  Tensor incremental = concat(step_logits, 1);  // (B, T, V)
  // [/excerpt]
  out << tr(out, "after 4 calls the cache holds, per decoder layer:\n", "调用 4 次之后，每个解码器层的缓存里有：\n")
      << tr(out, "  self-attention k, v: ", "  自注意力的 k, v：") << shape_str(cache.self[0].k.shape())
      << tr(out, " (B, H, T, D), one row added per call\n", " (B, H, T, D)，每次调用增加一行\n")
      << tr(out, "  cross-attention k, v: ", "  交叉注意力的 k, v：") << shape_str(cache.cross[0].k.shape())
      << tr(out, " (B, H, S, D), computed on the first call and reused\n",
            " (B, H, S, D)，第一次调用时算好，之后重复使用\n");
  r.cache_vs_full = max_abs_diff(incremental.to_vector(), logits.to_vector());
  show(out, tr(out, "logits for 'apples' (recomputed)", "'apples' 的 logits（重新计算）"),
       reshape(slice(logits, 1, 3, 4), {8}).detach(), 4);
  show(out, tr(out, "logits for 'apples' (cached)    ", "'apples' 的 logits（用缓存）  "),
       reshape(slice(incremental, 1, 3, 4), {8}), 4);
  out << tr(out, "largest |cached - recomputed| over all positions: ", "所有位置上 |缓存 - 重算| 的最大值：")
      << (r.cache_vs_full < 1e-5 ? std::string(tr(out, "below 1e-5 (float32 rounding: the sums run in another order)",
                                                  "小于 1e-5（float32 舍入误差：求和的顺序不同）"))
                                 : fmt(r.cache_vs_full, 7))
      << "\n";

  heading(out, 4, "What the cache saves: multiply-adds in the matmuls", "缓存省下了什么：矩阵乘法里的乘加次数");
  Sizes tiny{cfg.n_decoder_layers, cfg.d_model, cfg.d_ff, cfg.tgt_vocab_size, 3};
  Sizes base{6, 512, 2048, 32000, 50};  // the base Transformer, 50 source tokens
  r.tiny_without = cost_without_cache(tiny, 4);
  r.tiny_with = cost_with_cache(tiny, 4);
  r.base_without = cost_without_cache(base, 50);
  r.base_with = cost_with_cache(base, 50);
  auto row = [&](const char* what, int64_t without, int64_t with) {
    out << "  " << what << tr(out, ": without cache ", "  不用缓存 ") << format_count(without)
        << tr(out, ", with cache ", "，用缓存 ") << format_count(with) << tr(out, " (", "（前者是后者的 ")
        << fmt(static_cast<double>(without) / static_cast<double>(with), 1) << tr(out, "x fewer)\n", " 倍）\n");
  };
  row(tr(out, "this model, 4 tokens          ", "这个模型，4 个词元           "), r.tiny_without, r.tiny_with);
  row(tr(out, "base Transformer, 50 tokens   ", "基础版 Transformer，50 个词元"), r.base_without, r.base_with);
  out << tr(out,
            "without a cache step t redoes the work of steps 1..t-1, so generating T tokens costs\n"
            "about T^2 / 2 token passes instead of T; the cache trades that for memory:\n"
            "2 * L * T * C numbers for the self-attention keys and values.\n",
            "没有缓存时，第 t 步要把第 1..t-1 步的活重做一遍，生成 T 个词元大约要\n"
            "T^2 / 2 次词元计算，而不是 T 次；缓存用内存换时间：\n"
            "自注意力的键和值共占 2 × L × T × C 个数。\n");

  heading(out, 5, "The wiring with both masks: the source padded to 4 tokens", "连线与两种掩码：源序列填充到 4 个词元");
  // [excerpt: masks]
  IntTensor src4({1, 4}, {3, 4, 5, 0});                 // 我 喜欢 苹果 <pad>: id 0 pads
  Tensor src_pad = Transformer::padding_mask(src4, 0);  // (B, S): 1 where a key is padding
  SelfAttentionBlock& enc0 = model.encoder_layers[0];
  enc0.attn.keep_attention(true);
  layer0.attn.keep_attention(true);
  layer0.cross_attn.keep_attention(true);
  Tensor memory4 = model.encode(src4, src_pad);                                  // encoder self-attention: <pad> masked
  Tensor logits4 = model.decode(tgt, memory4, src_pad);                          // cross-attention: <pad> masked too
  Tensor enc_w = enc0.attn.last_attention();                                     // (B, H, S, S)
  Tensor self4 = reshape(slice(layer0.attn.last_attention(), 1, 0, 1), {4, 4});  // causal, (T, T)
  Tensor cross4 = reshape(slice(layer0.cross_attn.last_attention(), 1, 0, 1), {4, 4});  // (T, S)
  // [/excerpt]
  const std::vector<std::string> source4 = {"我", "喜欢", "苹果", "<pad>"};
  auto column_max = [](const Tensor& w, int64_t col) {  // the largest weight any query gives key `col`
    const int64_t S = w.shape().back();
    std::vector<double> v = w.to_vector();
    double m = 0;
    for (size_t i = static_cast<size_t>(col); i < v.size(); i += static_cast<size_t>(S)) m = std::max(m, v[i]);
    return m;
  };
  r.pad_weight_encoder = column_max(enc_w, 3);
  r.pad_weight_cross = column_max(cross4, 3);
  out << tr(out, "padding mask of the source (1 = <pad>): ", "源序列的填充掩码（1 = <pad>）：")
      << fmt_vec(src_pad.to_vector(), 0) << "\n";
  out << tr(out, "largest weight on the <pad> key: encoder self-attention ", "<pad> 键得到的最大权重：编码器自注意力 ")
      << fmt(r.pad_weight_encoder, 4) << tr(out, ", cross-attention ", "，交叉注意力 ") << fmt(r.pad_weight_cross, 4)
      << "\n";
  show(out,
       tr(out, "cross-attention weights, head 0 (columns 我 喜欢 苹果 <pad>)",
          "交叉注意力权重，头 0（各列依次为 我 喜欢 苹果 <pad>）"),
       cross4, 3);
  out << tr(out, "the decoder's self-attention keeps its causal mask: ", "解码器的自注意力仍然带着因果掩码：")
      << tr(out, "weights above the diagonal ", "对角线以上的权重 ")
      << fmt_vec({self4.at({0, 1}), self4.at({0, 2}), self4.at({0, 3}), self4.at({1, 2}), self4.at({1, 3}),
                  self4.at({2, 3})},
                 4)
      << "\n";
  out << "memory = encode(src, src_padding): " << shape_str(memory4.shape())
      << ", logits: " << shape_str(logits4.shape()) << "\n";
  draw_graphviz(out, "decoder_wiring.png", [&] {
    Seq2SeqPicture p;
    p.source = source4;
    p.target = kTarget;
    p.self_weights = self4.to_vector();
    p.cross_weights = cross4.to_vector();
    p.memory_shape = shape_str(memory4.shape());
    p.logits_shape = shape_str(logits4.shape());
    p.encoder_layers = cfg.n_encoder_layers;
    p.decoder_layers = cfg.n_decoder_layers;
    const bool pre = cfg.norm == NormPlacement::pre;  // where each block's LayerNorms sit
    p.encoder_block = pre ? "LN, self-attention (padding mask), LN, feed-forward"
                          : "self-attention (padding mask), LN, feed-forward, LN";
    p.decoder_block = pre ? "LN, causal self-attention, LN, cross-attention (padding mask), LN, feed-forward"
                          : "causal self-attention, LN, cross-attention (padding mask), LN, feed-forward, LN";
    return seq2seq_dot(p);
  });
  enc0.attn.keep_attention(false);
  layer0.attn.keep_attention(false);
  layer0.cross_attn.keep_attention(false);
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_decoder() {
  return {"decoder", "Decoder block: causal self-attention, cross-attention, the KV cache",
          "解码器块与 KV 缓存：因果自注意力、交叉注意力、缓存与重算", printing(run_lesson_decoder)};
}

}  // namespace sf::lessons
