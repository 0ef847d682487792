// Lesson 11: the encoder block. Two residual sublayers (attention, feed-forward), the norms of
// the hidden state after each, and why the residual path keeps gradients alive.
// Text: encoder.md.
#include <cmath>
#include <memory>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/encoder.h"
#include "nn/blocks.h"
#include "nn/init.h"

namespace sf::lessons {

// The mean over tokens of each token vector's L2 norm: how large the hidden state is.
static double token_norm(const Tensor& t) {
  return mean(sqrt(sum(t.detach() * t.detach(), {-1}))).item();  // (B, T, C) -> (B, T) -> ()
}

EncoderResult run_lesson_encoder(std::ostream& out) {
  EncoderResult r;
  manual_seed(9);

  heading(out, 1, "An encoder block (Pre-LN), C = 16, 4 heads", "一个编码器块（Pre-LN），C = 16，4 个头");
  // [excerpt: block]
  BlockConfig cfg;
  cfg.d_model = 16;
  cfg.n_head = 4;
  cfg.norm = NormPlacement::pre;  // x + f(LN(x)), as GPT-2
  SelfAttentionBlock block(cfg);  // the encoder's layer; with a causal mask, the GPT's
  Generator gen(99);
  Tensor x = Tensor::randn({1, 5, 16}, gen);  // five token vectors (B, T, C)
  // [/excerpt]
  out << block.summary();

  heading(out, 2, "The residual paths, one sublayer at a time", "残差连接：一次看一个子层");
  // [excerpt: residual]
  Tensor a = block.attn.forward(block.ln_1.forward(x));  // (B, T, C): what attention adds
  Tensor h = x + a;                                      // (B, T, C): first residual sum
  Tensor f = block.mlp.forward(block.ln_2.forward(h));   // (B, T, C): what the FFN adds
  Tensor y = h + f;                                      // (B, T, C): second residual sum
  // [/excerpt]
  r.by_hand_vs_block = max_abs_diff(y.to_vector(), block.forward(x).to_vector());
  out << tr(out, "largest |by hand - block.forward(x)| = ", "|手算 - block.forward(x)| 的最大值 = ")
      << (r.by_hand_vs_block == 0     ? std::string("0")
          : r.by_hand_vs_block < 1e-6 ? std::string(tr(out, "below 1e-6", "小于 1e-6"))
                                      : fmt(r.by_hand_vs_block, 8))
      << "\n";
  out << tr(out, "per-token norms:\n  token | |x|    | |attn| | |x+attn| | |ffn|  | |out|\n",
            "每个词元的范数：\n  词元  | |x|    | |attn| | |x+attn| | |ffn|  | |out|\n");
  for (int64_t t = 0; t < 5; ++t) {
    auto n = [t](const Tensor& v) { return fmt(token_norm(slice(v, 1, t, t + 1)), 3); };
    out << "  " << t << "     | " << n(x) << "  | " << n(a) << "  | " << n(h) << "    | " << n(f) << "  | " << n(y)
        << "\n";
  }
  r.norms = {token_norm(x), token_norm(a), token_norm(h), token_norm(f), token_norm(y)};
  out << tr(out, "  mean  | ", "  平均  | ") << fmt(r.norms[0], 3) << "  | " << fmt(r.norms[1], 3) << "  | "
      << fmt(r.norms[2], 3) << "    | " << fmt(r.norms[3], 3) << "  | " << fmt(r.norms[4], 3) << "\n";
  out << tr(out, "each sublayer adds a correction to the stream; nothing replaces it.\n",
            "每个子层只是往残差流上加一个修正量，不会替换掉它。\n");

  heading(out, 3, "Gradients: the residual path is a highway", "梯度：残差连接是一条高速公路");
  // [excerpt: gradient]
  Tensor G = Tensor::randn({1, 5, 16}, gen);  // an upstream gradient dL/dy
  Tensor xg = x.clone().requires_grad_();
  sum(block.forward(xg) * G).backward();  // y = x + a + f: dy/dx = I + ...
  Tensor dx = xg.grad();
  Tensor xn = x.clone().requires_grad_();  // the same sublayers without residuals
  sum(block.mlp.forward(block.ln_2.forward(block.attn.forward(block.ln_1.forward(xn)))) * G).backward();
  // [/excerpt]
  r.grad_upstream = std::sqrt(sum(G * G).item());
  r.grad_with_residual = std::sqrt(sum(dx * dx).item());
  r.grad_sublayers_only = std::sqrt(sum((dx - G) * (dx - G)).item());
  r.grad_without_residual = std::sqrt(sum(xn.grad() * xn.grad()).item());
  out << "|dL/dy|                                  = " << fmt(r.grad_upstream, 4) << "\n"
      << tr(out, "|dL/dx| through the block                = ", "经过整个块的 |dL/dx|             = ")
      << fmt(r.grad_with_residual, 4) << "\n"
      << tr(out, "  of which through the sublayers |dx - G| = ", "  其中经过子层的部分 |dx - G|    = ")
      << fmt(r.grad_sublayers_only, 4) << "\n"
      << tr(out, "|dL/dx| with the residual sums removed   = ", "去掉残差相加之后的 |dL/dx|       = ")
      << fmt(r.grad_without_residual, 4) << "\n"
      << tr(out,
            "the identity path hands dL/dy to x unchanged; without it the gradient must squeeze\n"
            "through every LayerNorm and projection of the block, and shrinks.\n",
            "恒等路径把 dL/dy 原封不动地交给 x；没有它，梯度就得挤过每一个层归一化和投影，\n"
            "并因此变小。\n");

  heading(out, 4, "Six blocks at GPT-2 initialisation: norms after every sublayer",
          "按 GPT-2 方式初始化的六个块：每个子层之后的范数");
  // [excerpt: stack]
  const int64_t L = 6;
  std::vector<std::unique_ptr<SelfAttentionBlock>> stack;
  Generator init_gen(1);
  for (int64_t l = 0; l < L; ++l) {
    stack.push_back(std::make_unique<SelfAttentionBlock>(cfg));
    init_parameters(*stack.back(), InitScheme::gpt2, L, init_gen);  // N(0, 0.02), c_proj / sqrt(2L)
  }
  Tensor s = x;
  for (auto& b : stack) {
    Tensor after_attn = s + b->attn.forward(b->ln_1.forward(s));                  // (B, T, C)
    Tensor after_ffn = after_attn + b->mlp.forward(b->ln_2.forward(after_attn));  // (B, T, C)
    r.stack_norms.push_back(token_norm(after_attn));
    r.stack_norms.push_back(token_norm(after_ffn));
    s = after_ffn;
  }
  // [/excerpt]
  out << tr(out, "input |x| = ", "输入 |x| = ") << fmt(token_norm(x), 4) << "\n";
  for (int64_t l = 0; l < L; ++l)
    out << tr(out, "  block ", "  块 ") << l << tr(out, ": after attention ", "：注意力之后 ")
        << fmt(r.stack_norms[static_cast<size_t>(2 * l)], 4) << tr(out, ", after FFN ", "，FFN 之后 ")
        << fmt(r.stack_norms[static_cast<size_t>(2 * l + 1)], 4) << "\n";
  out << tr(out,
            "with small initial weights every block starts close to the identity, so the stream\n"
            "passes through almost unchanged and training can grow each correction gradually.\n",
            "初始权重很小，每个块一开始都接近恒等映射，残差流几乎原样通过，\n"
            "训练再一点点把每个修正量养大。\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_encoder() {
  return {"encoder", "Encoder block: residual paths, hidden-state norms per sublayer",
          "编码器块：残差连接、每个子层之后的隐藏状态范数", printing(run_lesson_encoder)};
}

}  // namespace sf::lessons
