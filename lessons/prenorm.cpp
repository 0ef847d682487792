// Lesson 15: Pre-LN versus Post-LN. The same 12-layer GPT with LayerNorm after the residual sum
// (the original Transformer) or before each sublayer (GPT-2): hidden-state and gradient norms
// per layer at initialisation, in the setting Xiong et al. (2020) analyse (unit-scale token
// vectors, sinusoidal positions, ReLU, Xavier, untied head). Text: prenorm.md.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/common/diagrams.h"
#include "lessons/common/pictures.h"
#include "lessons/prenorm.h"
#include "nn/gpt.h"

namespace sf::lessons {

static double token_norm(const Tensor& t) {  // mean over tokens of |h_t|
  return mean(sqrt(sum(t * t, {-1}))).item();
}

// [excerpt: probe]
// GPT::forward written out so that each block's output can be kept and asked for its gradient.
struct Probe {
  std::vector<double> hidden, hidden_grad, param_grad;  // per block
  double loss = 0, loss_model = 0;
  int64_t channels = 0, attn_params = 0, mlp_params = 0, ln_params = 0;  // C; one block's sublayers
};
static Probe probe(NormPlacement norm, const IntTensor& idx, const IntTensor& targets) {
  GPTConfig cfg;
  cfg.vocab_size = 64;
  cfg.block_size = 32;
  cfg.n_layer = 12;
  cfg.n_head = 4;
  cfg.n_embd = 64;
  cfg.norm = norm;                             // NormPlacement::pre or ::post
  cfg.seed = 11;                               // the same initial weights for both
  cfg.init = InitScheme::xavier;               // the 2017 Transformer, as Xiong et al. analyse it:
  cfg.scale_embeddings = true;                 //   token vectors N(0, 1/C) * sqrt(C): unit scale
  cfg.pos_encoding = PosEncoding::sinusoidal;  //   fixed sinusoidal positions
  cfg.activation = Activation::relu;           //   ReLU feed-forward
  cfg.tied_head = false;                       //   an output layer of its own
  GPT model(cfg);
  AttentionMask causal;
  causal.causal = true;
  Tensor x = model.embed(idx);  // (B, T, C): sqrt(C) * wte[idx] + sinusoid; dropout is 0
  std::vector<Tensor> hs;
  for (size_t i = 0; i < model.h.size(); ++i) {
    x = model.h[i].forward(x, causal);  // (B, T, C)
    x.retain_grad();                    // keep dL/dx of this non-leaf after backward
    hs.push_back(x);
  }
  Tensor logits = model.lm_head->forward(model.ln_f ? model.ln_f->forward(x) : x);  // (B, T, V)
  Tensor loss = cross_entropy(logits, targets);
  loss.backward();
  // [/excerpt]
  Probe p;
  p.loss = loss.item();
  p.channels = model.config().n_embd;
  p.attn_params = model.h[0].attn.num_parameters();
  p.mlp_params = model.h[0].mlp.num_parameters();
  p.ln_params = model.h[0].ln_1.num_parameters();
  {
    NoGradGuard no_grad;
    p.loss_model = model.loss(idx, targets).item();
  }
  for (size_t i = 0; i < hs.size(); ++i) {
    p.hidden.push_back(token_norm(hs[i].detach()));
    p.hidden_grad.push_back(std::sqrt(sum(hs[i].grad() * hs[i].grad()).item()));
    double g2 = 0;
    for (const auto& [name, param] : model.h[i].named_parameters())
      if (param.grad().defined()) g2 += sum(param.grad() * param.grad()).item();
    p.param_grad.push_back(std::sqrt(g2));
  }
  return p;
}

PreNormResult run_lesson_prenorm(std::ostream& out) {
  PreNormResult r;
  Generator gen(1111);
  const int64_t B = 4, T = 32;
  IntTensor idx({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
  IntTensor targets({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
  for (int64_t i = 0; i < B * T; ++i) {
    idx[i] = static_cast<int32_t>(gen.randint(64));
    targets[i] = static_cast<int32_t>(gen.randint(64));
  }

  heading(out, 1, "The same GPT twice: 12 layers, C = 64, 4 heads, the 2017 Transformer's setting",
          "同一个 GPT 的两种写法：12 层，C = 64，4 个头，2017 年 Transformer 的设置");
  Probe pre = probe(NormPlacement::pre, idx, targets);
  Probe post = probe(NormPlacement::post, idx, targets);
  out << tr(out, "Pre-LN:  x = x + f(LN(x)), then a final LayerNorm   loss ",
            "Pre-LN:  x = x + f(LN(x))，最后再加一个 LayerNorm   损失 ")
      << fmt(pre.loss, 4) << " (model.loss: " << fmt(pre.loss_model, 4) << ")\n";
  out << tr(out, "Post-LN: x = LN(x + f(x))                            loss ",
            "Post-LN: x = LN(x + f(x))                           损失 ")
      << fmt(post.loss, 4) << " (model.loss: " << fmt(post.loss_model, 4) << ")\n";
  out << tr(out, "(a uniform guess over 64 tokens would give ln(64) = ", "（在 64 个词元上均匀瞎猜，损失是 ln(64) = ")
      << fmt(std::log(64.0), 4)
      << tr(out, "; the targets are random, so no model can do better)\n",
            "；目标是随机的，任何模型都不可能做得更好）\n");
  draw_graphviz(out, "prenorm_residual.png", [&] {
    return residual_dot({static_cast<int64_t>(pre.hidden.size()), pre.channels, pre.attn_params, pre.mlp_params,
                         pre.ln_params, pre.hidden.front(), pre.hidden.back(), post.hidden.front(),
                         post.hidden.back()});
  });
  r.loss_pre = pre.loss;
  r.loss_post = post.loss;
  r.loss_pre_model = pre.loss_model;
  r.loss_post_model = post.loss_model;

  heading(out, 2, "Per layer: hidden-state norm, its gradient, the block's parameter gradient",
          "逐层看：隐藏状态的范数、它的梯度、该块参数的梯度");
  out << "        |        Pre-LN               |        Post-LN\n"
      << tr(out, "  layer |  |h|    |dL/dh|   |dL/dW|   |  |h|    |dL/dh|   |dL/dW|\n",
            "  层    |  |h|    |dL/dh|   |dL/dW|   |  |h|    |dL/dh|   |dL/dW|\n");
  for (size_t i = 0; i < pre.hidden.size(); ++i) {
    auto cell = [](double v, int w) {
      std::string s = fmt(v, 4);
      return std::string(static_cast<size_t>(std::max(0, w - static_cast<int>(s.size()))), ' ') + s;
    };
    out << "  " << (i < 10 ? " " : "") << i << "    | " << cell(pre.hidden[i], 6) << "  " << cell(pre.hidden_grad[i], 7)
        << "  " << cell(pre.param_grad[i], 7) << "   | " << cell(post.hidden[i], 6) << "  "
        << cell(post.hidden_grad[i], 7) << "  " << cell(post.param_grad[i], 7) << "\n";
  }
  r.pre_hidden = pre.hidden;
  r.post_hidden = post.hidden;
  r.pre_param_grad = pre.param_grad;
  r.post_param_grad = post.param_grad;
  r.pre_hidden_grad = pre.hidden_grad;
  r.post_hidden_grad = post.hidden_grad;

  heading(out, 3, "What the table says", "这张表说明了什么");
  out << tr(out, "across the ", "以下比较的是这一个模型的 ") << pre.hidden.size()
      << tr(out, " layers of this one model (not across models of different depths):\n",
            " 层之间（不是不同深度的模型之间）：\n")
      << tr(out, "Pre-LN:  the stream grows from block to block, |h| ", "Pre-LN:  残差流逐块变大，|h| ")
      << fmt(pre.hidden.front(), 2) << " -> " << fmt(pre.hidden.back(), 2)
      << tr(out, ", and the blocks' gradients shrink with it, ", "，各块的梯度随之逐层变小，")
      << fmt(pre.param_grad.front(), 3) << " -> " << fmt(pre.param_grad.back(), 3) << "\n"
      << tr(out, "Post-LN: |h| is pinned at sqrt(C) = 8, and the gradients ", "Post-LN: |h| 固定在 sqrt(C) = 8，梯度")
      << (post.param_grad.back() > 1.1 * post.param_grad.front()
              ? tr(out, "grow toward the output, ", "越靠近输出越大，")
              : tr(out, "do not grow toward the output, ", "并不随靠近输出而变大，"))
      << fmt(post.param_grad.front(), 3) << " -> " << fmt(post.param_grad.back(), 3) << "\n"
      << tr(out, "at the last block Post-LN's parameter gradient is ", "在最后一个块，Post-LN 的参数梯度是 Pre-LN 的 ")
      << fmt(post.param_grad.back() / pre.param_grad.back(), 2) << tr(out, "x Pre-LN's\n", " 倍\n");
  out << tr(out, "Compare training curves: ", "比较训练曲线：") << "scratchformer compare configs/compare_ln.json\n";
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_prenorm() {
  return {"prenorm", "Pre-LN versus Post-LN: norms of hidden states and gradients per layer",
          "Pre-LN 与 Post-LN：逐层的隐藏状态范数和梯度范数", printing(run_lesson_prenorm)};
}

}  // namespace sf::lessons
