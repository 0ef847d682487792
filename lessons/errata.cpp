// Lesson 26: errata (勘误). The course grew out of three Chinese articles on attention
// (articles 000, 003 and 004). Their worked examples, recomputed with the framework: which
// numbers are only illustrative, which are wrong, and what the right ones are.
// Steps 8-10 (a GPT trained with article 004's mask bug) are in errata_mask.cpp.
// Text: errata.md, zh/errata.md.
#include <cmath>
#include <ostream>

#include <iostream>
#include <unistd.h>

#include "autograd/ops.h"
#include "lessons/errata.h"
#include "lessons/lesson.h"
#include "nn/attention.h"
#include "nn/blocks.h"
#include "nn/gpt.h"
#include "nn/module.h"
#include "nn/positional.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "train/progress.h"

namespace sf::lessons {

// Article 003's 我 / 喜欢 / 苹果 example: token embeddings, its "positional encoding" table,
// and the Q, K, V rows it gives (d = 4).
static const std::vector<double> kEmbed = {0.8, -0.2, 0.1, 0.9, 0.3, 0.7, -0.5, 0.4, -0.1, 0.6, 0.8, -0.3};
static const std::vector<double> kArticlePE = {0.0, 1.0, 0.0, 0.0, 0.8, 0.6, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0};
static const std::vector<double> kQ = {0.5, 0.1, 0.2, 0.8, 0.2, 0.6, 0.7, 0.1, 0.1, 0.3, 0.9, 0.4};
static const std::vector<double> kK = {0.9, 0.2, 0.1, 0.3, 0.4, 0.8, 0.5, 0.2, 0.2, 0.1, 0.8, 0.6};
static const std::vector<double> kV = {0.7, 0.2, 0.1, 0.5, 0.3, 0.8, 0.6, 0.2, 0.1, 0.4, 0.9, 0.3};

static std::vector<double> row(const std::vector<double>& m, size_t i, size_t cols = 4) {
  return std::vector<double>(m.begin() + static_cast<int64_t>(i * cols),
                             m.begin() + static_cast<int64_t>((i + 1) * cols));
}

static double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// w . V: the attention output of 苹果 for weights w over the three tokens.
static std::vector<double> mix(const std::vector<double>& w) {
  std::vector<double> o(4, 0.0);
  for (size_t j = 0; j < 3; ++j)
    for (size_t c = 0; c < 4; ++c) o[c] += w[j] * kV[j * 4 + c];
  return o;
}

static int64_t count_named(const Module& m, const std::string& part) {
  int64_t n = 0;
  for (const auto& [name, p] : m.named_parameters())
    if (name.find(part) != std::string::npos) n += p.numel();
  return n;
}

namespace errata {

// [excerpt: leaky_forward]
// The GPT's forward with the mask built but never applied: what 004's snippet does.
Tensor leaky_forward(GPT& model, const IntTensor& idx) {
  Tensor x = model.embed(idx);  // (B, T, C)
  AttentionMask mask;           // mask.causal stays false: every key is visible
  for (size_t i = 0; i < model.h.size(); ++i) x = model.h[i].forward(x, mask);
  return model.lm_head->forward(model.ln_f->forward(x));  // (B, T, V)
}
// [/excerpt]

std::vector<double> train(GPT& model, bool leaky, data::RandomWindows& batches, int64_t steps) {
  AdamOptions adam;
  adam.lr = 3e-3;
  adam.weight_decay = 0.0;
  AdamW opt(model.named_parameters(), adam);
  Progress progress(steps, steps, std::cerr, isatty(2) != 0);
  std::vector<double> losses;
  // [excerpt: train_step]
  for (int64_t step = 0; step < steps; ++step) {
    data::LmBatch b = batches.next();  // (B, T) inputs and targets
    opt.zero_grad();
    Tensor logits = leaky ? leaky_forward(model, b.inputs) : model.forward(b.inputs);  // (B, T, V)
    Tensor loss = cross_entropy(logits, b.targets);
    loss.backward();
    double norm = clip_grad_norm(model.named_parameters(), 1.0);
    opt.step();
    losses.push_back(loss.item());
    double tokens = static_cast<double>((step + 1) * b.inputs.numel());                    // tokens trained on so far
    progress.update({step + 1, loss.item(), adam.lr, norm, tokens / progress.elapsed()});  // the bar on stderr
  }
  // [/excerpt]
  progress.finish();
  return losses;
}

}  // namespace errata

ErrataResult run_lesson_errata(std::ostream& out) {
  ErrataResult r;
  errata_articles(out, r);
  errata_mask_training(out, r);
  return r;
}

// Article 003's positional-encoding table, and sinusoidal positions have no parameters.
static void errata_positions(std::ostream& out, ErrataResult& r) {
  heading(out, 1, "Article 003's positional-encoding table is not the sinusoidal one",
          "文章 003 的位置编码表不是正弦位置编码");
  // [excerpt: pe]
  Tensor PE = sinusoidal_table(3, 4, 0, DType::f64);  // PE[p, 2i] = sin(p / 10000^(2i/4)), cos at 2i+1
  // [/excerpt]
  r.pe = PE.to_vector();
  std::vector<std::vector<std::string>> table{{tr(out, "position", "位置"), tr(out, "article 003", "文章 003"),
                                               tr(out, "sinusoidal (Vaswani et al.)", "正弦编码（Vaswani 等）"),
                                               tr(out, "norms", "范数")}};
  for (size_t p = 0; p < 3; ++p)
    table.push_back({"  " + std::to_string(p), fmt_vec(row(kArticlePE, p), 1), fmt_vec(row(r.pe, p), 3),
                     fmt(norm(row(kArticlePE, p)), 3) + "  " + fmt(norm(row(r.pe, p)), 3)});
  print_table(out, table, {8, 22, 30});
  std::vector<double> apple_article(4), apple_real(4);
  for (size_t c = 0; c < 4; ++c) {
    apple_article[c] = kEmbed[8 + c] + kArticlePE[8 + c];
    apple_real[c] = kEmbed[8 + c] + r.pe[8 + c];
  }
  r.apple_input = apple_real;
  out << tr(out, "苹果 at position 2, embedding + PE: article ", "苹果在位置 2，嵌入 + 位置编码：文章 ")
      << fmt_vec(apple_article, 1) << tr(out, ", sinusoidal ", "，正弦编码 ") << fmt_vec(apple_real, 3) << "\n";
  out << tr(out,
            "Each (sin, cos) pair of the real table has norm 1, so every row has norm sqrt(2) and\n"
            "position 0 is [0, 1, 0, 1], not [0, 1, 0, 0]. The article's rows are made up.\n",
            "真正的表里每一对 (sin, cos) 的范数都是 1，所以每一行的范数都是 sqrt(2)，位置 0 是\n"
            "[0, 1, 0, 1] 而不是 [0, 1, 0, 0]。文章里的这几行是编出来的。\n");
  GPTConfig cfg;
  cfg.vocab_size = 8, cfg.block_size = 16, cfg.n_layer = 1, cfg.n_head = 1, cfg.n_embd = 4;
  cfg.pos_encoding = PosEncoding::sinusoidal;
  r.sinusoidal_params = count_named(GPT(cfg), "wpe");
  cfg.pos_encoding = PosEncoding::learned;
  r.learned_params = count_named(GPT(cfg), "wpe");
  out << tr(out, "position parameters of a GPT (block 16, C = 4): sinusoidal ",
            "GPT（block 16，C = 4）的位置参数：正弦编码 ")
      << r.sinusoidal_params << tr(out, ", learned ", "，可学习的位置嵌入 ") << r.learned_params << "\n"
      << tr(out,
            "The article calls the sinusoidal encoding learnable: it is a fixed function with\n"
            "nothing to learn. Learned positions (GPT-2's wpe) are a different scheme.\n",
            "文章说正弦位置编码“可学习”：它是固定的函数，没有任何要学的参数。可学习的位置嵌入\n"
            "（GPT-2 的 wpe）是另一种方案。\n");
}

// Article 003's softmax sum: rounded before adding.
static void errata_softmax(std::ostream& out, ErrataResult& r) {
  heading(out, 2, "Article 003's softmax: the sum is 4.3535, not 4.36",
          "文章 003 的 softmax：指数和是 4.3535，不是 4.36");
  // [excerpt: softmax]
  Tensor q = Tensor::from_vector(row(kQ, 2), {1, 4}, DType::f64);  // Q of 苹果
  Tensor K = Tensor::from_vector(kK, {3, 4}, DType::f64);
  Tensor scaled = matmul_bt(q, K) * (1.0 / std::sqrt(4.0));  // (1, 3): q.k / sqrt(d_k)
  Tensor e = exp(scaled);
  Tensor weights = softmax(scaled, -1);  // e / sum(e)
  // [/excerpt]
  r.exps = e.to_vector();
  r.exp_sum = sum(e).item();
  r.weights = weights.to_vector();
  double rounded_sum = 0;
  std::vector<double> rounded_weights;
  for (double x : r.exps) rounded_sum += std::round(x * 100) / 100;  // the article's 1.20 + 1.50 + 1.66
  for (double x : r.exps) rounded_weights.push_back(std::round(x * 100) / 100 / rounded_sum);
  r.rounded_sum = rounded_sum;
  out << "scaled scores   " << fmt_vec(scaled.to_vector(), 3) << "\n"
      << "e^x             " << fmt_vec(r.exps, 4) << tr(out, "   sum ", "   和 ") << fmt(r.exp_sum, 4) << "\n"
      << tr(out, "rounded first   ", "先舍入再相加    ") << fmt_vec(r.exps, 2) << tr(out, "      sum ", "      和 ")
      << fmt(rounded_sum, 2) << "\n"
      << tr(out, "weights         ", "权重            ") << fmt_vec(r.weights, 4) << "\n"
      << tr(out, "from the rounded", "由舍入值算出    ") << fmt_vec(rounded_weights, 4) << "\n";
  out << tr(out,
            "4.36 is the sum of the rounded terms. The weights agree to the 3 digits the article\n"
            "prints (0.275, 0.344, 0.381): an illustrative rounding, not an error in the result.\n",
            "4.36 是先舍入再相加的结果。权重在文章给出的 3 位小数上是一致的（0.275、0.344、0.381）：\n"
            "这是示意性的舍入，结论本身没有错。\n");
}

// Article 003's attention output: a mix of value vectors, not the embedding.
static void errata_mix(std::ostream& out, ErrataResult& r) {
  heading(out, 3, "Article 003 reads the output against the embedding, but it is a mix of values",
          "文章 003 拿输出和原始嵌入逐维比较，但输出是值向量的加权混合");
  // [excerpt: mix]
  std::vector<double> output = mix(r.weights);           // what attention gives 苹果
  std::vector<double> only_self = mix({0.0, 0.0, 1.0});  // all weight on 苹果 itself: V of 苹果
  std::vector<double> uniform = mix({1.0 / 3, 1.0 / 3, 1.0 / 3});
  // [/excerpt]
  r.output = output, r.only_self = only_self, r.uniform = uniform;
  out << tr(out, "embedding of 苹果        ", "苹果的嵌入               ") << fmt_vec(row(kEmbed, 2), 4) << "\n"
      << tr(out, "attention output        ", "注意力输出               ") << fmt_vec(output, 4) << "\n"
      << tr(out, "weights [0, 0, 1]       ", "权重 [0, 0, 1]           ") << fmt_vec(only_self, 4) << "\n"
      << tr(out, "weights [1/3, 1/3, 1/3] ", "权重 [1/3, 1/3, 1/3]     ") << fmt_vec(uniform, 4) << "\n";
  std::vector<double> lo(4, 1e9), hi(4, -1e9);
  for (size_t j = 0; j < 3; ++j)
    for (size_t c = 0; c < 4; ++c) lo[c] = std::min(lo[c], kV[j * 4 + c]), hi[c] = std::max(hi[c], kV[j * 4 + c]);
  out << tr(out, "every output lies between the values' ", "任何输出的每一维都落在值向量的 ") << fmt_vec(lo, 1)
      << tr(out, " and ", " 和 ") << fmt_vec(hi, 1) << tr(out, "\n", " 之间\n");
  out << tr(out,
            "The output is w . V: a weighted mean of the three value vectors, which W_V put in a\n"
            "space of its own. Even with no context at all (weights [0, 0, 1]) dimension 1 'rises'\n"
            "from -0.1 to 0.1 and dimension 4 'flips sign' from -0.3 to 0.3: the article's readings\n"
            "(the subject's presence, a positive feeling from 喜欢) describe its made-up V, not\n"
            "the context. In a real layer the output then passes W_O and is added to x.\n",
            "输出是 w . V：三个值向量的加权平均，而值向量经 W_V 投影，处在另一个空间里。即使完全\n"
            "没有上下文（权重 [0, 0, 1]），第 1 维也会从 -0.1“升”到 0.1，第 4 维也会从 -0.3“翻\n"
            "号”成 0.3：文章的解读（主语的存在感、喜欢带来的积极情感）说的是它编出来的 V，而\n"
            "不是上下文。在真实的层里，这个输出还要乘 W_O，再加回 x。\n");
}

// Article 003's heads: d_k = d_model / h, and what the article's scheme costs.
static void errata_heads(std::ostream& out, ErrataResult& r) {
  heading(out, 4, "Article 003's heads each output d_model values; d_k = d_model / h says otherwise",
          "文章 003 的每个头都输出 d_model 维；d_k = d_model / h 说的不是这样");
  // [excerpt: heads]
  AttentionConfig ac;
  ac.d_model = 4, ac.n_head = 4, ac.bias = false;
  MultiHeadAttention mha(ac);                // c_attn (3C, C) and c_proj (C, C)
  int64_t ours = mha.num_parameters();       // 4 C^2
  int64_t article = 4 * 3 * 4 * 4 + 16 * 4;  // 4 heads x (Wq, Wk, Wv of 4 x 4) + W_O (16 x 4)
  // [/excerpt]
  r.head_size = mha.head_size();
  r.mha_params = ours, r.article_mha_params = article;
  const int64_t C = 768, H = 12;
  r.mha_params_768 = 4 * C * C;
  r.article_mha_params_768 = H * 3 * C * C + H * C * C;
  ac.d_model = C, ac.n_head = H;
  out << tr(out, "d_model 4, h 4:     ", "d_model 4，h 4：    ") << tr(out, "head size ", "每头维度 ") << r.head_size
      << tr(out, ", weights ", "，权重 ") << ours
      << tr(out, "; the article's scheme: head size 4, weights ", "；按文章的做法：每头 4 维，权重 ") << article << "\n"
      << tr(out, "d_model 768, h 12: ", "d_model 768，h 12： ") << tr(out, "head size ", "每头维度 ") << C / H
      << tr(out, ", weights ", "，权重 ") << MultiHeadAttention(ac).num_parameters()
      << tr(out, "; the article's scheme: ", "；按文章的做法：") << r.article_mha_params_768 << tr(out, " (", "（")
      << r.article_mha_params_768 / r.mha_params_768 << tr(out, "x)\n", " 倍）\n");
  std::vector<std::vector<double>> article_heads = {
      {0.1, 0.7, 0.2}, {0.4, 0.2, 0.4}, {0.05, 0.9, 0.05}, {0.33, 0.33, 0.33}};
  out << tr(out, "the sums of the article's four example weight rows: ", "文章给的四行示例权重之和：");
  for (const auto& h : article_heads) {
    r.article_head_sums.push_back(h[0] + h[1] + h[2]);
    out << fmt(r.article_head_sums.back(), 2) << " ";
  }
  out << "\n"
      << tr(out,
            "With d_k = d_model / h (articles 000 and 004, lesson 7) the heads split d_model:\n"
            "concatenated they are d_model wide again, and multi-head attention costs what one\n"
            "head of full width would. Heads of d_model values each, reduced by W_O, cost h times\n"
            "as much. Article 000's 2.36M for d_model 768, h 12 is right (lesson 7: 2,359,296).\n"
            "(A uniform row is 1/3 each: 0.33 three times sums to 0.99.)\n",
            "按 d_k = d_model / h（文章 000、004 和第 7 课），各个头瓜分 d_model：拼接后又是\n"
            "d_model 维，多头注意力的开销与一个全宽的单头相同。每个头都输出 d_model 维、再由 W_O\n"
            "压缩，开销是 h 倍。文章 000 给出的约 2.36M（d_model 768、h 12）是对的（第 7 课：\n"
            "2,359,296）。（均匀分布每项是 1/3：三个 0.33 加起来只有 0.99。）\n");
}

// Article 004's Pre-LN layer (5), then its norm1(x) computed three times (6), on the same block.
static void errata_layer_norms(std::ostream& out, ErrataResult& r) {
  heading(out, 5, "Article 004's encoder layer is Pre-LN, without saying so",
          "文章 004 的编码器层是 Pre-LN，却没有说明");
  // [excerpt: pre_post]
  BlockConfig bc;
  bc.d_model = 8, bc.n_head = 2;
  Generator g1(5), g2(5);
  bc.norm = NormPlacement::pre;
  SelfAttentionBlock pre(bc, &g1);  // x + f(LN(x)): article 004's layer, GPT-2
  bc.norm = NormPlacement::post;
  SelfAttentionBlock post(bc, &g2);  // LN(x + f(x)): Vaswani et al. 2017, BERT
  Generator gx(6);
  Tensor x = Tensor::randn({1, 4, 8}, gx, 3.0);  // (B, T, C), 4 tokens of scale 3
  Tensor y_pre = pre.forward(x), y_post = post.forward(x);
  // [/excerpt]
  auto token_stats = [&](const Tensor& y, std::vector<double>& stds) {
    std::vector<double> v = y.to_vector();
    for (size_t t = 0; t < 4; ++t) {
      double m = 0, s = 0;
      for (size_t c = 0; c < 8; ++c) m += v[t * 8 + c] / 8;
      for (size_t c = 0; c < 8; ++c) s += (v[t * 8 + c] - m) * (v[t * 8 + c] - m) / 8;
      stds.push_back(std::sqrt(s));
    }
  };
  token_stats(y_pre, r.pre_stds);
  token_stats(y_post, r.post_stds);
  r.pre_post_diff = max_abs_diff(y_pre.to_vector(), y_post.to_vector());
  out << tr(out, "same weights, same input: largest difference of the outputs ",
            "相同的权重、相同的输入：两者输出的最大差值 ")
      << fmt(r.pre_post_diff, 3) << "\n"
      << tr(out, "per-token std of the output: Pre-LN ", "输出每个词元的标准差：Pre-LN ") << fmt_vec(r.pre_stds, 3)
      << "\n"
      << tr(out, "                             Post-LN ", "                      Post-LN ") << fmt_vec(r.post_stds, 3)
      << "\n";
  out << tr(out,
            "The two are different functions: Post-LN ends each layer with a LayerNorm (std 1 per\n"
            "token), Pre-LN leaves the residual stream unnormalised and needs a final ln_f. The\n"
            "original Transformer and BERT are Post-LN; 004's code is the GPT-2 layout. Its own\n"
            "troubleshooting list recommends Pre-LN for stability (lesson 15 shows why), which\n"
            "is right, but its \"encoder layer\" is one of the two choices, not the definition.\n",
            "这是两个不同的函数：Post-LN 在每层末尾做一次层归一化（每个词元标准差为 1），Pre-LN\n"
            "不归一化残差流，最后要再加一个 ln_f。原始 Transformer 和 BERT 都是 Post-LN；004 的\n"
            "代码是 GPT-2 的布局。它自己在排错清单里推荐用 Pre-LN 求稳定（原因见第 15 课），这没有\n"
            "错，但它给出的“编码器层”只是两种选择之一，并不是定义。\n");

  heading(out, 6, "Article 004 computes norm1(x) three times", "文章 004 把 norm1(x) 算了三遍");
  // [excerpt: three_norms]
  Tensor xa = x.detach().requires_grad_(), xb = x.detach().requires_grad_();
  Tensor n1 = pre.ln_1.forward(xa), n2 = pre.ln_1.forward(xa), n3 = pre.ln_1.forward(xa);  // 004
  Tensor once = pre.ln_1.forward(xb);                                                      // once
  sum(n1 * 1.0 + n2 * 2.0 + n3 * 3.0).backward();  // three consumers (say Q, K, V)
  sum(once * 1.0 + once * 2.0 + once * 3.0).backward();
  // [/excerpt]
  r.norm_repeat_diff =
      std::max(max_abs_diff(n1.to_vector(), n2.to_vector()), max_abs_diff(n1.to_vector(), n3.to_vector()));
  r.norm_grad_diff = max_abs_diff(xa.grad().to_vector(), xb.grad().to_vector());
  out << tr(out, "largest difference between the three results: ", "三次结果之间的最大差值：")
      << fmt(r.norm_repeat_diff, 6) << "\n"
      << tr(out, "largest difference of dL/dx, three calls against one: ", "dL/dx 的最大差值（三次调用对一次）：")
      << fmt(r.norm_grad_diff, 6) << "\n"
      << tr(out,
            "Harmless: the same values and the same gradient, at the cost of two extra LayerNorms\n"
            "per layer and their graph nodes. Compute it once (our c_attn even projects q, k and v\n"
            "in one matmul).\n",
            "无害：数值相同，梯度也相同，只是每层多做了两次层归一化，计算图里多了几个节点。算一次\n"
            "就够了（我们的 c_attn 甚至用一次矩阵乘法同时得到 q、k、v）。\n");
}

// Article 004's masked_fill whose result is dropped.
static void errata_mask_snippet(std::ostream& out, ErrataResult& r) {
  heading(out, 7, "Article 004's mask snippet throws its result away", "文章 004 的掩码代码把结果丢掉了");
  const Tensor K = Tensor::from_vector(kK, {3, 4}, DType::f64);  // as in errata_softmax
  // [excerpt: mask]
  Tensor scores = matmul_bt(Tensor::from_vector(kQ, {3, 4}, DType::f64), K) * 0.5;       // (3, 3)
  Tensor future = Tensor::from_vector({0, 1, 1, 0, 0, 1, 0, 0, 0}, {3, 3}, DType::f64);  // mask == 0
  masked_fill(scores, future, -INFINITY);  // 004: the returned tensor is dropped
  Tensor as_written = softmax(scores, -1);
  Tensor assigned = softmax(masked_fill(scores, future, -INFINITY), -1);  // scores = scores.masked_fill(...)
  // [/excerpt]
  r.unmasked_weights = as_written.to_vector();
  r.masked_weights = assigned.to_vector();
  show(out, tr(out, "weights as written (row t: query t)", "照原文写法得到的权重（第 t 行：查询 t）"), as_written, 4);
  show(out, tr(out, "weights with the result assigned", "把结果赋值回去后的权重"), assigned, 4);
  out << tr(out,
            "masked_fill returns a new tensor (in PyTorch too; masked_fill_ is the in-place one).\n"
            "Unassigned, the mask changes nothing and 我 attends to 喜欢 and 苹果, the future.\n"
            "The article's own attention function gets it right: scores = scores.masked_fill(...).\n",
            "masked_fill 返回一个新张量（PyTorch 里也是这样，原地修改的是 masked_fill_）。不赋值的话，\n"
            "掩码什么也没改变，我 会关注到 喜欢 和 苹果，也就是未来。文章自己的注意力函数写对了：\n"
            "scores = scores.masked_fill(...)。\n");
}

// The seven examples of articles 003 and 004, in the articles' order (the modules built without
// a Generator of their own draw from one seeded generator, so the order is part of the output).
void errata_articles(std::ostream& out, ErrataResult& r) {
  manual_seed(17);
  errata_positions(out, r);
  errata_softmax(out, r);
  errata_mix(out, r);
  errata_heads(out, r);
  errata_layer_norms(out, r);
  errata_mask_snippet(out, r);
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_errata() {
  return {"errata", "Errata: the source articles' examples recomputed, and a GPT trained without its mask",
          "勘误：重算源文章的例子，再训练一个丢了掩码的 GPT", printing(run_lesson_errata),
          /*slow=*/true};
}

}  // namespace sf::lessons
