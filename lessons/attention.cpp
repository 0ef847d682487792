// Lesson 5: attention by hand, on the worked example 我 / 喜欢 / 苹果 with d_k = 4, then the
// causal and padding masks and what -inf does inside softmax. Text: attention.md.
#include <cmath>
#include <ostream>

#include "autograd/quiet_xsimd.h"  // before any xtensor header: see there
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>

#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "autograd/xtensor.h"
#include "lessons/lesson.h"
#include "lessons/attention.h"
#include "lessons/common/diagrams.h"
#include "lessons/common/pictures.h"
#include "nn/layers.h"
#include "nn/module.h"

namespace sf::lessons {

static const std::vector<std::string> kTokens = {"我", "喜欢", "苹果"};

AttentionResult run_lesson_attention(std::ostream& out) {
  AttentionResult r;

  heading(out, 1, "The example: the query of 苹果, keys and values of 我 / 喜欢 / 苹果",
          "例子：“苹果”的查询，“我 / 喜欢 / 苹果”的键和值");
  // [excerpt: example]
  Tensor q = Tensor::from_vector({0.1, 0.3, 0.9, 0.4}, {1, 4}, DType::f64);  // Q(苹果)  (1, d_k)
  Tensor K = Tensor::from_vector({0.9, 0.2, 0.1, 0.3,                        // K(我)
                                  0.4, 0.8, 0.5, 0.2,                        // K(喜欢)
                                  0.2, 0.1, 0.8, 0.6},                       // K(苹果)
                                 {3, 4}, DType::f64);                        // (S, d_k)
  Tensor V = Tensor::from_vector({0.7, 0.2, 0.1, 0.5,                        // V(我)
                                  0.3, 0.8, 0.6, 0.2,                        // V(喜欢)
                                  0.1, 0.4, 0.9, 0.3},                       // V(苹果)
                                 {3, 4}, DType::f64);                        // (S, d_v)
  // [/excerpt]
  show(out, "q (苹果)", q, 1);
  show(out, tr(out, "K (rows 我, 喜欢, 苹果)", "K（各行依次为“我”“喜欢”“苹果”）"), K, 1);
  show(out, tr(out, "V (rows 我, 喜欢, 苹果)", "V（各行依次为“我”“喜欢”“苹果”）"), V, 1);

  heading(out, 2, "Scores: how well the query matches each key, q . k", "注意力分数：查询与每个键有多匹配，q . k");
  // [excerpt: scores]
  Tensor scores = matmul_bt(q, K);  // (1, d_k) @ (d_k, S) -> (1, S)
  // [/excerpt]
  r.scores = scores.to_vector();
  const double* qv = q.data<double>();
  for (int64_t s = 0; s < 3; ++s) {
    out << "  q . K(" << kTokens[static_cast<size_t>(s)] << ") = ";
    for (int64_t i = 0; i < 4; ++i) out << (i ? " + " : "") << fmt(qv[i], 1) << "*" << fmt(K.at({s, i}), 1);
    out << " = " << fmt(r.scores[static_cast<size_t>(s)], 2) << "\n";
  }

  heading(out, 3, "Scale by sqrt(d_k) = sqrt(4) = 2", "除以 sqrt(d_k) = sqrt(4) = 2 进行缩放");
  // [excerpt: scale]
  Tensor scaled = scores / std::sqrt(4.0);  // keeps the softmax out of its flat, saturated ends
  // [/excerpt]
  r.scaled = scaled.to_vector();
  out << "  scaled = " << fmt_vec(r.scaled, 3) << "\n";

  heading(out, 4, "Softmax: weights that are positive and sum to 1", "Softmax：权重全为正，且和为 1");
  // [excerpt: softmax]
  Tensor weights = softmax(scaled, -1);  // e^s_i / sum_j e^s_j along the keys
  // [/excerpt]
  r.weights = weights.to_vector();
  double total = 0;
  for (double s : r.scaled) total += std::exp(s);
  for (size_t s = 0; s < 3; ++s)
    out << "  e^" << fmt(r.scaled[s], 3) << " = " << fmt(std::exp(r.scaled[s]), 4) << "  -> "
        << fmt(std::exp(r.scaled[s]), 4) << " / " << fmt(total, 4) << " = " << fmt(r.weights[s], 4) << "  ("
        << kTokens[s] << ")\n";

  heading(out, 5, "The output for 苹果: the weighted sum of the values", "“苹果”的输出：值向量的加权和");
  // [excerpt: output]
  Tensor output = matmul(weights, V);  // (1, S) @ (S, d_v) -> (1, d_v)
  // [/excerpt]
  r.output = output.to_vector();
  out << tr(out, "  exact (from the unrounded weights):      ", "  精确值（用未舍入的权重）：     ")
      << fmt_vec(r.output, 4) << "\n";
  out << tr(out, "  the same to 3 digits:                    ", "  保留 3 位小数：                ")
      << fmt_vec(r.output, 3) << "\n";
  // The same sum by hand, as the formula sum_s w_s V[s, :] in xtensor over V's own numbers.
  // [excerpt: by_hand_sum]
  const xt::xtensor<double, 2> w3 = {{0.275}, {0.344}, {0.381}};  // (S, 1): the weights rounded to 3 digits
  const xt::xtensor<double, 1> by_hand = xt::sum(w3 * as_xtensor<double>(V), {0});  // (S, 1) * (S, d_v) -> (d_v)
  // [/excerpt]
  r.output_rounded_weights.assign(by_hand.begin(), by_hand.end());
  out << tr(out, "  by hand, weights rounded to 0.275, 0.344, 0.381:\n", "  手算，权重舍入为 0.275、0.344、0.381：\n");
  for (int64_t i = 0; i < 4; ++i)
    out << "    "
        << "0.275*" << fmt(V.at({0, i}), 1) << " + 0.344*" << fmt(V.at({1, i}), 1) << " + 0.381*"
        << fmt(V.at({2, i}), 1) << " = " << fmt(r.output_rounded_weights[static_cast<size_t>(i)], 4) << "\n";
  out << tr(out, "  by hand:                                 ", "  手算结果：                     ")
      << fmt_vec(r.output_rounded_weights, 4) << "\n";
  out << tr(out, "  the exact weights to 6 digits:           ", "  精确权重（6 位小数）：         ")
      << fmt_vec(r.weights, 6) << "\n";
  std::vector<double> diff(4);
  for (size_t i = 0; i < 4; ++i) diff[i] = r.output[i] - r.output_rounded_weights[i];
  out << tr(out, "  exact - by hand:                         ", "  精确值 - 手算：                ") << fmt_vec(diff, 6)
      << "\n";

  // For the masks, all three tokens need a query. The example gives only 苹果's; these two are
  // made up for the demonstration.
  heading(out, 6, "All three queries at once, with the causal mask", "三个查询一起算，加上因果掩码");
  // [excerpt: causal]
  Tensor Q = Tensor::from_vector({0.8, 0.1, 0.2, 0.4,                                    // Q(我)   (made up)
                                  0.3, 0.9, 0.4, 0.1,                                    // Q(喜欢) (made up)
                                  0.1, 0.3, 0.9, 0.4},                                   // Q(苹果) (from the example)
                                 {3, 4}, DType::f64);                                    // (T, d_k)
  Tensor S = matmul_bt(Q, K) / 2.0;                                                      // (T, S)
  Tensor future = Tensor::from_vector({0, 1, 1, 0, 0, 1, 0, 0, 0}, {3, 3}, DType::f64);  // 1 = key s > query t
  Tensor masked = masked_fill(S, future, -INFINITY);  // e^-inf = 0: no weight on the future
  Tensor P = softmax(masked, -1);                     // (T, S)
  Tensor O = matmul(P, V);                            // (T, d_v)
  // [/excerpt]
  show(out, tr(out, "scores / 2 with the future set to -inf", "分数 / 2，未来位置置为 -inf"), masked, 3);
  show(out, tr(out, "weights", "权重"), P, 4);
  heat_map(out, P.to_vector(), 3, 3, kTokens, kTokens);
  draw_attention(out, "attention_causal.png", attention_maps_of(P.to_vector(), 1, kTokens, kTokens), 0,
                 "causal attention");
  r.causal_weights = P.to_vector();
  out << tr(out, "row 苹果 sees every key, so it is the example's weights again: ",
            "“苹果”这一行能看到所有键，所以又得到例子里的权重：")
      << fmt_vec(slice(P, 0, 2, 3).to_vector(), 4) << "\n";
  out << tr(out, "row 我 sees only itself: its output is V(我) = ", "“我”这一行只能看到自己：输出就是 V(我) = ")
      << fmt_vec(slice(O, 0, 0, 1).to_vector(), 4) << "\n";
  // The framework's fused kernel does the same in one call (q, k, v as (B, H, T, D)).
  // [excerpt: fused]
  AttentionOptions causal;
  causal.causal = true;
  Tensor fused = attention(reshape(Q, {1, 1, 3, 4}), reshape(K, {1, 1, 3, 4}), reshape(V, {1, 1, 3, 4}),
                           causal);  // (1, 1, T, d_v)
  // [/excerpt]
  r.fused_output = fused.to_vector();
  r.hand_output = O.to_vector();
  out << tr(out, "largest |sf::attention(causal) - the steps above| = ",
            "|sf::attention(causal) - 上面的分步计算| 的最大值 = ")
      << fmt(max_abs_diff(r.fused_output, r.hand_output), 12) << "\n";

  heading(out, 7, "Padding: a batch row 我 喜欢 苹果 <pad>", "填充：批次中的一行“我 喜欢 苹果 <pad>”");
  // [excerpt: padding]
  Tensor K4 = concat({K, Tensor::full({1, 4}, 9.0, DType::f64)}, 0);  // <pad> gets junk: 9s
  Tensor V4 = concat({V, Tensor::full({1, 4}, 9.0, DType::f64)}, 0);
  Tensor Q4 = concat({Q, Tensor::zeros({1, 4}, DType::f64)}, 0);       // (T=4, d_k)
  Tensor pad = Tensor::from_vector({0, 0, 0, 1}, {1, 4}, DType::f64);  // 1 = padding key
  Tensor P4 = softmax(masked_fill(matmul_bt(Q4, K4) / 2.0, pad, -INFINITY), -1);
  // [/excerpt]
  show(out, tr(out, "weights with the <pad> key masked", "屏蔽 <pad> 键之后的权重"), P4, 4);
  r.padding_weights = P4.to_vector();
  out << tr(out,
            "the <pad> column is 0, so its junk value never reaches any output;\n"
            "row 苹果 is again ",
            "<pad> 这一列是 0，所以它的垃圾值不会进入任何输出；\n"
            "“苹果”这一行仍然是 ")
      << fmt_vec(slice(P4, 0, 2, 3).to_vector(), 4) << "\n";

  heading(out, 8, "What -inf does in softmax, and a row with nothing to attend to",
          "-inf 在 softmax 里的作用，以及无处可看的一行");
  Tensor row = Tensor::from_vector({0.18, -INFINITY, 0.505}, {3}, DType::f64);
  out << "  softmax([0.18, -inf, 0.505]) = " << fmt_vec(softmax(row, -1).to_vector(), 4)
      << tr(out, "   (e^-inf = 0 exactly)\n", "   （e^-inf 恰好等于 0）\n");
  Tensor dead = Tensor::full({3}, -INFINITY, DType::f64);
  r.all_masked_row = softmax(dead, -1).to_vector();
  out << "  softmax([-inf, -inf, -inf]) = " << fmt_vec(r.all_masked_row, 4)
      << tr(out, "   (e^-inf / sum = 0 / 0: sf::softmax returns zeros, not NaN)\n",
            "   （e^-inf / sum = 0 / 0：sf::softmax 返回全零，而不是 NaN）\n");
  Tensor big = Tensor::full({3}, -1e9, DType::f64);
  out << "  softmax([-1e9, -1e9, -1e9]) = " << fmt_vec(softmax(big, -1).to_vector(), 4)
      << tr(out, "   (a large negative number instead: uniform, also meaningless)\n",
            "   （改用一个很大的负数：结果是均匀分布，同样没有意义）\n");
  AttentionOptions all_padded;
  all_padded.key_padding = Tensor::ones({1, 3}, DType::f64);
  Tensor none = attention(reshape(Q, {1, 1, 3, 4}), reshape(K, {1, 1, 3, 4}), reshape(V, {1, 1, 3, 4}), all_padded);
  out << tr(out, "  sf::attention with every key padded returns ", "  所有键都被填充时，sf::attention 对这样的行返回 ")
      << fmt_vec(slice(reshape(none, {3, 4}), 0, 0, 1).to_vector(), 1)
      << tr(out, " for such a row;\n  padded query rows are junk either way, and the loss skips those positions\n",
            "；\n  反正填充位置的查询行都是无用的，损失函数会跳过这些位置\n");

  heading(out, 9, "The whole sentence 我 / 喜欢 / 吃 / 红 / 苹果 as matrices, with learned projections",
          "整句“我 / 喜欢 / 吃 / 红 / 苹果”写成矩阵，Q、K、V 来自可学习的投影");
  {
    // [excerpt: sentence]
    const std::vector<std::string> tokens = {"我", "喜欢", "吃", "红", "苹果"};
    const int64_t T = 5, C = 8, d_k = 4;
    manual_seed(5);                                // the projections' initial weights
    Linear w_q(C, d_k), w_k(C, d_k), w_v(C, d_k);  // each: weight (d_k, C), bias (d_k)
    Generator gen(55);
    Tensor X = Tensor::randn({T, C}, gen);  // stand-ins for the 5 token vectors (T, C)
    Tensor Qs = w_q.forward(X);             // (T, d_k): X W_q^T + b_q, what each token looks for
    Tensor Ks = w_k.forward(X);             // (T, d_k): what each token offers to be found by
    Tensor Vs = w_v.forward(X);             // (T, d_k): what each token passes on
    std::vector<double> above(static_cast<size_t>(T * T), 0.0);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t k = t + 1; k < T; ++k) above[static_cast<size_t>(t * T + k)] = 1.0;  // key after query
    Tensor mask = Tensor::from_vector(above, {T, T});
    Tensor Ps = softmax(masked_fill(matmul_bt(Qs, Ks) / std::sqrt(double(d_k)), mask, -INFINITY), -1);  // (T, T)
    Tensor Ys = matmul(Ps, Vs);                                                                         // (T, d_k)
    // [/excerpt]
    auto line = [&](const std::string& what, const Tensor& t) {
      out << "  " << pad_right(what, 26) << shape_str(t.shape()) << "\n";
    };
    line("X", X);
    line(tr(out, "W_q, W_k, W_v (weights)", "W_q、W_k、W_v（权重）"), w_q.weight);
    line(tr(out, "Q = X W_q^T, K, V", "Q = X W_q^T、K、V"), Qs);
    line(tr(out, "weights = softmax(...)", "权重 = softmax(...)"), Ps);
    line(tr(out, "output = weights V", "输出 = 权重 · V"), Ys);
    r.sentence_weights = Ps.to_vector();
    out << tr(out, "row 苹果 of the weights: ", "权重中“苹果”这一行：") << fmt_vec(slice(Ps, 0, 4, 5).to_vector(), 3)
        << tr(out, " (sums to 1)\n", "（和为 1）\n");
    draw_graphviz(out, "attention_qkv.png", [&] {
      return qkv_dot({tokens, X, w_q.weight, w_k.weight, w_v.weight, w_q.bias, w_k.bias, w_v.bias, Qs, Ks, Vs, Ps, Ys});
    });
  }
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_attention() {
  return {"attention", "Attention by hand: 我 / 喜欢 / 苹果, then causal and padding masks",
          "手算注意力：“我 / 喜欢 / 苹果”，再加因果掩码和填充掩码", printing(run_lesson_attention)};
}

}  // namespace sf::lessons
