// Lesson 10: the position-wise feed-forward network, and GELU versus ReLU.
// Text: feedforward.md.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/feedforward.h"
#include "lessons/common/pictures.h"

namespace sf::lessons {

// The picture: ReLU, GELU and their slopes on [-4, 4], 161 points, values and slopes from the
// same ops and backward as the table.
static std::string activation_plot() {
  std::vector<double> v;
  for (int i = 0; i <= 160; ++i) v.push_back(-4.0 + 0.05 * i);
  Tensor x = Tensor::from_vector(v, {161}, DType::f64).requires_grad_();
  Tensor relu_x = relu(x), gelu_x = gelu(x);
  sum(relu_x).backward();
  std::vector<double> drelu = x.grad().to_vector();
  x.zero_grad();
  sum(gelu_x).backward();
  std::vector<double> dgelu = x.grad().to_vector(), r = relu_x.to_vector(), g = gelu_x.to_vector();
  std::string s =
      "set title 'ReLU and GELU, and their slopes' noenhanced\nset xlabel 'x'\nset grid\n"
      "set key top left\nset yrange [-0.5:2.5]\n$d << EOD\n";
  for (size_t i = 0; i < v.size(); ++i)
    s +=
        fmt(v[i], 2) + " " + fmt(r[i], 5) + " " + fmt(g[i], 5) + " " + fmt(drelu[i], 5) + " " + fmt(dgelu[i], 5) + "\n";
  return s +
         "EOD\nplot $d using 1:2 with lines lw 2 lc rgb '#c82829' title 'relu(x)', "
         "$d using 1:3 with lines lw 2 lc rgb '#4271ae' title 'gelu(x)', "
         "$d using 1:4 with lines lw 1 dt 2 lc rgb '#c82829' title 'relu slope', "
         "$d using 1:5 with lines lw 1 dt 2 lc rgb '#4271ae' title 'gelu slope'\n";
}

FeedForwardResult run_lesson_feedforward(std::ostream& out) {
  FeedForwardResult r;

  heading(out, 1, "ReLU, GELU and their slopes", "ReLU、GELU 和它们的斜率");
  // [excerpt: activations]
  Tensor x = Tensor::from_vector({-3, -2, -1, -0.5, 0, 0.5, 1, 2, 3}, {9}, DType::f64).requires_grad_();
  Tensor relu_x = relu(x);                    // max(x, 0)
  Tensor gelu_x = gelu(x);                    // x * Phi(x), Phi = normal CDF
  Tensor gelu_t = gelu(x, GeluApprox::tanh);  // GPT-2's tanh approximation
  sum(relu_x).backward();                     // x.grad = relu'(x)
  Tensor drelu = x.grad().clone();
  x.zero_grad();
  sum(gelu_x).backward();  // x.grad = gelu'(x)
  // [/excerpt]
  r.xs = x.to_vector();
  r.relu = relu_x.to_vector();
  r.gelu = gelu_x.to_vector();
  r.gelu_tanh = gelu_t.to_vector();
  r.drelu = drelu.to_vector();
  r.dgelu = x.grad().to_vector();
  out << "     x |    relu |    gelu | gelu(tanh) | relu' |   gelu'\n";
  for (size_t i = 0; i < r.xs.size(); ++i) {
    auto col = [](const std::string& s, size_t w) { return std::string(w > s.size() ? w - s.size() : 0, ' ') + s; };
    out << col(fmt(r.xs[i], 1), 6) << " | " << col(fmt(r.relu[i], 4), 7) << " | " << col(fmt(r.gelu[i], 4), 7) << " | "
        << col(fmt(r.gelu_tanh[i], 4), 10) << " | " << col(fmt(r.drelu[i], 0), 5) << " | " << col(fmt(r.dgelu[i], 4), 7)
        << "\n";
  }
  out << tr(out,
            "GELU lets a little negative signal through (its minimum is about -0.17 at x = -0.75)\n"
            "and its slope changes smoothly; ReLU's slope jumps from 0 to 1 at x = 0.\n",
            "GELU 会放过一点负信号（最小值约为 -0.17，在 x = -0.75 处），\n"
            "而且斜率变化平滑；ReLU 的斜率从 0 跳到 1，就在 x = 0 处。\n");

  draw_gnuplot(out, "feedforward_activations.png", activation_plot());

  heading(out, 2, "How close is the tanh approximation?", "tanh 近似有多准？");
  Tensor grid = Tensor::from_vector(
      [] {
        std::vector<double> v;
        for (int i = -600; i <= 600; ++i) v.push_back(i / 100.0);
        return v;
      }(),
      {1201}, DType::f64);
  r.tanh_approx_max_error = max_abs_diff(gelu(grid).to_vector(), gelu(grid, GeluApprox::tanh).to_vector());
  out << tr(out, "largest |gelu(x) - gelu_tanh(x)| on [-6, 6] = ", "|gelu(x) - gelu_tanh(x)| 在 [-6, 6] 上的最大值 = ")
      << fmt(r.tanh_approx_max_error, 6) << "\n";

  heading(out, 3, "The feed-forward block: expand 4x, activate, project back",
          "前馈网络：扩大到 4 倍宽、激活、再投影回来");
  // [excerpt: ffn]
  const int64_t T = 3, C = 4, hidden = 4 * C;
  Generator gen(8);
  Tensor h_in = Tensor::randn({T, C}, gen, 1.0, DType::f64);                         // (T, C)
  Tensor W1 = Tensor::randn({hidden, C}, gen, 1.0 / std::sqrt(C), DType::f64);       // (4C, C)
  Tensor b1 = Tensor::zeros({hidden}, DType::f64);                                   // (4C)
  Tensor W2 = Tensor::randn({C, hidden}, gen, 1.0 / std::sqrt(hidden), DType::f64);  // (C, 4C)
  Tensor b2 = Tensor::zeros({C}, DType::f64);                                        // (C)
  Tensor a = linear(h_in, W1, b1);  // (T, 4C): each token on its own, no mixing across T
  Tensor g = gelu(a);               // (T, 4C)
  Tensor y = linear(g, W2, b2);     // (T, C)
  // [/excerpt]
  show(out, "x", h_in, 3);
  show(out, "x W1^T + b1", a, 2, 32);
  show(out, "gelu(...)", g, 2, 32);
  show(out, "y", y, 3);
  r.shapes = {h_in.size(0), h_in.size(1), a.size(0), a.size(1), y.size(0), y.size(1)};
  r.params_768 = 768 * 3072 + 3072 + 3072 * 768 + 768;
  out << tr(out, "parameters for C = 768 (hidden 3072): 768*3072 + 3072 + 3072*768 + 768 = ",
            "C = 768（隐藏层 3072）时的参数量：768*3072 + 3072 + 3072*768 + 768 = ")
      << r.params_768
      << tr(out, "\n  (twice the 2,362,368 of the attention block that precedes it)\n",
            "\n  （是它前面那个注意力块 2,362,368 个参数的两倍）\n");

  heading(out, 4, "Dead units: where no gradient flows", "死神经元：梯度流不过去的地方");
  Tensor batch = Tensor::randn({64, 16}, gen, 1.0, DType::f64);
  Tensor Wb = Tensor::randn({64, 16}, gen, 0.25, DType::f64);
  Tensor pre = linear(batch, Wb).requires_grad_();  // (64 tokens, 64 hidden units)
  sum(relu(pre)).backward();
  int64_t zero_relu = 0, zero_gelu = 0;
  for (double v : pre.grad().to_vector()) zero_relu += v == 0.0;
  pre.zero_grad();
  sum(gelu(pre)).backward();
  for (double v : pre.grad().to_vector()) zero_gelu += v == 0.0;
  r.dead_relu_fraction = static_cast<double>(zero_relu) / static_cast<double>(pre.numel());
  r.zero_gelu_grad_fraction = static_cast<double>(zero_gelu) / static_cast<double>(pre.numel());
  out << tr(out, "on 64 tokens x 64 hidden units at initialisation:\n", "初始化时，在 64 个词元 × 64 个隐藏单元上：\n")
      << tr(out, "  ReLU passes no gradient for ", "  ReLU 对其中 ") << fmt(100 * r.dead_relu_fraction, 1)
      << tr(out, "% of them\n", "% 的单元不传梯度\n") << tr(out, "  GELU for ", "  GELU 是 ")
      << fmt(100 * r.zero_gelu_grad_fraction, 1)
      << tr(out, "% (its slope is small for negative inputs, but not zero)\n", "%（输入为负时斜率很小，但不为零）\n")
      << tr(out,
            "a ReLU unit whose input is negative for every token gets no gradient at all:\n"
            "no step moves its weights or bias, so it stays dead until its inputs change.\n",
            "如果某个 ReLU 单元对所有词元的输入都是负的，它就完全得不到梯度：\n"
            "没有哪一步会更新它的权重和偏置，所以在它的输入改变之前，它一直是“死”的。\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_feedforward() {
  return {"feedforward", "Feed-forward: GELU versus ReLU, the 4x expansion",
          "前馈网络与 GELU：与 ReLU 对比、隐藏层扩大到 4 倍宽", printing(run_lesson_feedforward)};
}

}  // namespace sf::lessons
