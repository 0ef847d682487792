// Lesson 7: multi-head attention. Splitting C channels into H heads of D = C / H, attending in
// each head separately, merging back; the shapes at every step, the parameter count, and what
// each head looks at. Text: multihead.md.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "lessons/lesson.h"
#include "lessons/common/diagrams.h"
#include "lessons/common/pictures.h"
#include "lessons/multihead.h"
#include "nn/attention.h"
#include "nn/module.h"

namespace sf::lessons {

static const std::vector<std::string> kSentence = {"我", "喜欢", "吃", "红", "苹果"};

MultiHeadResult run_lesson_multihead(std::ostream& out) {
  MultiHeadResult r;
  manual_seed(6);

  heading(out, 1, "One attention layer, four heads, a five-token sentence", "一个注意力层，四个头，一句五个词元的话");
  // [excerpt: setup]
  const int64_t B = 1, T = 5, C = 16, H = 4;  // D = C / H = 4
  AttentionConfig cfg;
  cfg.d_model = C;
  cfg.n_head = H;
  MultiHeadAttention attn(cfg);  // c_attn (3C, C), c_proj (C, C), with biases
  Generator gen(66);
  Tensor x = Tensor::randn({B, T, C}, gen, 2.0);  // stand-ins for the 5 token vectors (B, T, C)
  // [/excerpt]
  out << tr(out, "sentence: 我 / 喜欢 / 吃 / 红 / 苹果, ", "句子：我 / 喜欢 / 吃 / 红 / 苹果，")
      << "B = 1, T = 5, C = 16, H = 4, D = C / H = 4\n";
  out << attn.summary();

  heading(out, 2, "Step by step, with the shape after every step", "逐步计算，列出每一步之后的形状");
  // [excerpt: steps]
  Tensor qkv = attn.c_attn->forward(x);        // (B, T, 3C): q, k, v for every token in one matmul
  Tensor q = split_heads(qkv, 3, 0, H);        // (B, H, T, D): channels 0..C-1, cut into H heads
  Tensor k = split_heads(qkv, 3, 1, H);        // (B, H, T, D)
  Tensor v = split_heads(qkv, 3, 2, H);        // (B, H, T, D)
  Tensor y = attention(q, k, v);               // (B, H, T, D): H independent attentions
  Tensor merged = merge_heads(y);              // (B, T, C): the heads side by side again
  Tensor out_x = attn.c_proj.forward(merged);  // (B, T, C): mixes what the heads found
  // [/excerpt]
  auto line = [&](const char* what, const Tensor& t, const char* note) {
    out << "  " << what << std::string(22 - std::string(what).size(), ' ') << shape_str(t.shape())
        << std::string(16 - shape_str(t.shape()).size(), ' ') << note << "\n";
    r.shapes.push_back(t.shape());
  };
  line("x", x, "(B, T, C)");
  line("qkv = c_attn(x)", qkv, "(B, T, 3C)");
  line("q = split_heads(...)", q, "(B, H, T, D)");
  line("k", k, "(B, H, T, D)");
  line("v", v, "(B, H, T, D)");
  line("attention(q, k, v)", y, "(B, H, T, D)");
  line("merge_heads(...)", merged, "(B, T, C)");
  line("c_proj(...)", out_x, "(B, T, C)");
  out << tr(out,
            "head h uses channels h*D .. h*D+D-1 of q, k and v: a head is a slice, not a copy of\n"
            "the model. Splitting is a reshape (B, T, H, D) and a transpose to (B, H, T, D).\n",
            "头 h 用的是 q、k、v 的第 h*D .. h*D+D-1 个通道：一个头是模型的一个切片，而不是\n"
            "一份副本。拆分头就是一次 reshape (B, T, H, D) 再转置成 (B, H, T, D)。\n");
  Tensor module_out = attn.forward(x);
  r.steps_vs_module = max_abs_diff(out_x.to_vector(), module_out.to_vector());
  out << tr(out, "largest |steps - attn.forward(x)| = ", "|分步结果 - attn.forward(x)| 的最大值 = ")
      << (r.steps_vs_module == 0     ? std::string("0")
          : r.steps_vs_module < 1e-6 ? std::string(tr(out, "below 1e-6", "小于 1e-6"))
                                     : fmt(r.steps_vs_module, 8))
      << "\n";
  draw_graphviz(out, "multihead_split_merge.png", [&] { return heads_dot({x, qkv, q, k, v, y, merged, out_x, H}); });

  heading(out, 3, "What each head looks at", "每个头在看什么");
  // [excerpt: heat]
  attn.keep_attention(true);
  attn.forward(x);
  Tensor weights = attn.last_attention();  // (B, H, T, T): one T x T map per head
  // [/excerpt]
  r.weights = weights.to_vector();
  show(out, tr(out, "head 0 weights", "头 0 的权重"), reshape(slice(weights, 1, 0, 1), {T, T}), 3);
  for (int64_t h = 0; h < H; ++h) {
    out << tr(out, "head ", "头 ") << h << tr(out, " (rows: queries, columns: keys)\n", "（行：查询，列：键）\n");
    Tensor w = reshape(slice(weights, 1, h, h + 1), {T * T});
    heat_map(out, w.to_vector(), T, T, kSentence, kSentence);
  }
  draw_attention(out, "multihead_weights.png", attention_maps_of(r.weights, H, kSentence, kSentence), 0,
                 "4 heads, random weights");
  out << tr(out,
            "each row sums to 1; the heads differ because each has its own slice of Wq, Wk, Wv\n"
            "(here random: a trained model's heads specialise, e.g. on the previous token)\n",
            "每一行的和都是 1；各个头不同，是因为每个头有自己那一片 Wq、Wk、Wv\n"
            "（这里是随机权重；训练好的模型里，各个头会分工，比如专门看前一个词元）\n");

  heading(out, 4, "Parameters: d_model 768, 12 heads", "参数量：d_model 768，12 个头");
  // [excerpt: count]
  AttentionConfig big;
  big.d_model = 768;
  big.n_head = 12;  // D = 64
  big.bias = false;
  int64_t without_bias = MultiHeadAttention(big).num_parameters();
  big.bias = true;
  int64_t with_bias = MultiHeadAttention(big).num_parameters();
  // [/excerpt]
  r.params_no_bias = without_bias;
  r.params_bias = with_bias;
  out << tr(out,
            "Wq, Wk, Wv, Wo are each 768 x 768: 4 * 768 * 768 = ", "Wq、Wk、Wv、Wo 各是 768 × 768：4 × 768 × 768 = ")
      << format_count(4 * 768 * 768) << "\n";
  out << "MultiHeadAttention(768, 12 heads, bias = false).num_parameters() = " << format_count(without_bias) << "\n";
  out << "MultiHeadAttention(768, 12 heads, bias = true).num_parameters()  = " << format_count(with_bias)
      << tr(out, " (+ 4 * 768 = ", "（+ 4 × 768 = ") << format_count(4 * 768) << tr(out, " biases)\n", " 个偏置）\n");
  out << tr(out, "per head: Wq, Wk, Wv slices of 64 x 768 each; the count does not depend on H.\n",
            "每个头：Wq、Wk、Wv 中各一片 64 × 768；总参数量与 H 无关。\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_multihead() {
  return {"multihead", "Multi-head attention: split and merge, 2,359,296 weights, per-head heat maps",
          "多头注意力：拆分与合并、2,359,296 个权重、每个头的热图", printing(run_lesson_multihead)};
}

}  // namespace sf::lessons
