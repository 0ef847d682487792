// Lesson 9: LayerNorm. Statistics per token, what it does to scale, and its gradient.
// Text: layernorm.md.
#include <cmath>
#include <ostream>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/layernorm.h"

namespace sf::lessons {

// [excerpt: composed]
// LayerNorm written with primitives: (x - mean) / sqrt(var + eps), statistics over C per token.
static Tensor layer_norm_composed(const Tensor& x, double eps) {
  Tensor mu = mean(x, {-1}, true);                     // (T, 1)
  Tensor centered = x - mu;                            // (T, C)
  Tensor var = mean(centered * centered, {-1}, true);  // (T, 1), biased: divides by C
  return centered / sqrt(var + eps);                   // (T, C)
}
// [/excerpt]

LayerNormResult run_lesson_layernorm(std::ostream& out) {
  LayerNormResult r;
  const double eps = 1e-5;

  heading(out, 1, "Three tokens with very different scales", "三个尺度相差很大的词元");
  // [excerpt: input]
  Tensor x = Tensor::from_vector({1.0, 2.0, 3.0, 4.0,               // an ordinary token
                                  -20.0, 5.0, 10.0, 45.0,           // a loud one
                                  0.01, -0.02, 0.03, 0.0},          // a quiet one
                                 {3, 4}, DType::f64);               // (T, C)
  Tensor mu = mean(x, {-1});                                        // (T)
  Tensor sd = sqrt(mean(pow(x - reshape(mu, {3, 1}), 2.0), {-1}));  // (T), biased
  // [/excerpt]
  show(out, "x", x, 2);
  r.means = mu.to_vector();
  r.stds = sd.to_vector();
  out << tr(out, "per-token mean = ", "每个词元的均值   = ") << fmt_vec(r.means, 4) << "\n";
  out << tr(out, "per-token std  = ", "每个词元的标准差 = ") << fmt_vec(r.stds, 4) << "\n";

  heading(out, 2, "Normalise each token: mean 0, standard deviation 1", "逐个词元归一化：均值 0，标准差 1");
  // [excerpt: normalise]
  Tensor y = layer_norm(x, Tensor(), Tensor(), eps);  // no weight/bias: gamma = 1, beta = 0
  // [/excerpt]
  show(out, "LN(x)", y, 4);
  r.out_means = mean(y, {-1}).to_vector();
  r.out_stds = sqrt(mean(y * y, {-1})).to_vector();
  out << tr(out, "per-token mean = ", "每个词元的均值   = ") << fmt_vec(r.out_means, 4) << "\n";
  out << tr(out, "per-token std  = ", "每个词元的标准差 = ") << fmt_vec(r.out_stds, 4)
      << tr(out, "\n  (the quiet token's variance, ", "\n  （幅度很小的那个词元方差为 ")
      << fmt(r.stds[2] * r.stds[2], 6) << tr(out, ", is only ", "，仅为 eps 的 ") << fmt(r.stds[2] * r.stds[2] / eps, 0)
      << tr(out, " times eps = 1e-5, so eps shrinks it a little)\n",
            " 倍（eps = 1e-5），所以 eps 会把它的标准差压小一点）\n");
  out << tr(out,
            "a learned gain and bias per channel then set the scale the next layer wants:\n"
            "  y = gamma * LN(x) + beta, gamma and beta of shape (C)\n",
            "随后每个通道一个可学习的增益和偏置，把尺度调成下一层需要的样子：\n"
            "  y = gamma * LN(x) + beta，gamma 和 beta 的形状都是 (C)\n");

  heading(out, 3, "Scale invariance: LN(10 x) = LN(x)", "尺度不变性：LN(10 x) = LN(x)");
  Tensor y10 = layer_norm(x * 10.0, Tensor(), Tensor(), eps);
  r.scale_invariance = max_abs_diff(y10.to_vector(), y.to_vector());
  show(out, "LN(10 x)", y10, 4);
  out << tr(out, "largest |LN(10 x) - LN(x)| = ", "|LN(10 x) - LN(x)| 的最大值 = ") << fmt(r.scale_invariance, 6)
      << tr(out, " (all of it from eps, on the quiet token)\n", "（全部来自 eps，出现在幅度很小的那个词元上）\n");

  heading(out, 4, "The gradient: fused backward against the composed one", "梯度：融合实现的反向传播与组合实现对比");
  // [excerpt: gradient]
  Tensor xg = x.clone().requires_grad_();
  Tensor G = Tensor::from_vector({1, 0, 0, 0, 0.5, -1, 2, 0, 1, 1, 1, 1}, {3, 4}, DType::f64);
  sum(layer_norm(xg, Tensor(), Tensor(), eps) * G).backward();  // G = dL/dy
  Tensor dx = xg.grad().clone();
  xg.zero_grad();
  sum(layer_norm_composed(xg, eps) * G).backward();
  // [/excerpt]
  show(out, "G = dL/dy", G, 1);
  show(out, tr(out, "dx (fused layer_norm)", "dx（融合的 layer_norm）"), dx, 4);
  r.fused_vs_composed = max_abs_diff(dx.to_vector(), xg.grad().to_vector());
  out << tr(out, "largest |fused - composed| = ", "|融合 - 组合| 的最大值 = ") << fmt(r.fused_vs_composed, 12) << "\n";
  r.grad_row_sum = 0;
  r.grad_dot_xhat = 0;
  for (int64_t t = 0; t < 3; ++t) {
    double s = 0, d = 0;
    for (int64_t c = 0; c < 4; ++c) {
      s += dx.at({t, c});
      d += dx.at({t, c}) * y.at({t, c});
    }
    r.grad_row_sum = std::max(r.grad_row_sum, std::fabs(s));
    r.grad_dot_xhat = std::max(r.grad_dot_xhat, std::fabs(d));
  }
  out << tr(out, "each row of dx sums to 0 (largest |sum| ", "dx 每一行的和都是 0（|和| 的最大值 ")
      << (r.grad_row_sum < 1e-12 ? "< 1e-12" : fmt(r.grad_row_sum, 14))
      << tr(out, "): adding a constant to a token does not change LN(x)\n", "）：给一个词元整体加上常数，LN(x) 不变\n");
  out << tr(out, "each row of dx is nearly orthogonal to LN(x) (largest |dx . y| = ",
            "dx 每一行都几乎与 LN(x) 正交（|dx . y| 的最大值 = ")
      << fmt(r.grad_dot_xhat, 8)
      << tr(out, "):\n  scaling a token does not change LN(x), except through eps\n",
            "）：\n  把一个词元整体放缩，LN(x) 也不变（eps 带来的影响除外）\n");
  out << tr(out,
            "the uniform G on the last row gives dx = 0 there: moving every output equally is\n"
            "moving the mean, which LN removes.\n",
            "最后一行的 G 各分量相同，那里的 dx 就是 0：让所有输出一起移动等于移动均值，\n"
            "而均值正是 LN 去掉的东西。\n");

  heading(out, 5, "gradcheck of layer_norm with a gain and a bias", "对带增益和偏置的 layer_norm 做 gradcheck");
  Generator gen(7);
  GradcheckResult check =
      gradcheck([eps](const std::vector<Tensor>& in) { return layer_norm(in[0], in[1], in[2], eps); },
                {Tensor::randn({3, 4}, gen, 1.0, DType::f64).requires_grad_(),
                 Tensor::randn({4}, gen, 1.0, DType::f64).requires_grad_(),
                 Tensor::randn({4}, gen, 1.0, DType::f64).requires_grad_()});
  out << (check.ok ? tr(out, "pass", "通过") : tr(out, "FAIL", "失败")) << tr(out, ": ", "：") << check.checked
      << tr(out, " Jacobian entries of x, gamma and beta\n", " 个雅可比元素，覆盖 x、gamma 和 beta\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_layernorm() {
  return {"layernorm", "LayerNorm: statistics per token, scale invariance, its gradient",
          "层归一化：逐词元统计、尺度不变性、它的梯度", printing(run_lesson_layernorm)};
}

}  // namespace sf::lessons
