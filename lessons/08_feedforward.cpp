// Lesson 8: the position-wise feed-forward network, and GELU versus ReLU.
// Text: 08_feedforward.md.
#include <cmath>
#include <ostream>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/lessons.h"

namespace sf::lessons {

FeedForwardResult run_lesson_feedforward(std::ostream& out) {
  FeedForwardResult r;

  heading(out, 1, "ReLU, GELU and their slopes");
  // [excerpt: activations]
  Tensor x = Tensor::from_vector({-3, -2, -1, -0.5, 0, 0.5, 1, 2, 3}, {9}, DType::f64)
                 .requires_grad_();
  Tensor relu_x = relu(x);                             // max(x, 0)
  Tensor gelu_x = gelu(x);                             // x * Phi(x), Phi = normal CDF
  Tensor gelu_t = gelu(x, GeluApprox::tanh);           // GPT-2's tanh approximation
  sum(relu_x).backward();                              // x.grad = relu'(x)
  Tensor drelu = x.grad().clone();
  x.zero_grad();
  sum(gelu_x).backward();                              // x.grad = gelu'(x)
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
    out << col(fmt(r.xs[i], 1), 6) << " | " << col(fmt(r.relu[i], 4), 7) << " | "
        << col(fmt(r.gelu[i], 4), 7) << " | " << col(fmt(r.gelu_tanh[i], 4), 10) << " | "
        << col(fmt(r.drelu[i], 0), 5) << " | " << col(fmt(r.dgelu[i], 4), 7) << "\n";
  }
  out << "GELU lets a little negative signal through (its minimum is about -0.17 at x = -0.75)\n"
         "and its slope changes smoothly; ReLU's slope jumps from 0 to 1 at x = 0.\n";

  heading(out, 2, "How close is the tanh approximation?");
  Tensor grid = Tensor::from_vector([] {
    std::vector<double> v;
    for (int i = -600; i <= 600; ++i) v.push_back(i / 100.0);
    return v;
  }(), {1201}, DType::f64);
  r.tanh_approx_max_error = max_abs_diff(gelu(grid).to_vector(), gelu(grid, GeluApprox::tanh).to_vector());
  out << "largest |gelu(x) - gelu_tanh(x)| on [-6, 6] = " << fmt(r.tanh_approx_max_error, 6) << "\n";

  heading(out, 3, "The feed-forward block: expand 4x, activate, project back");
  // [excerpt: ffn]
  const int64_t T = 3, C = 4, hidden = 4 * C;
  Generator gen(8);
  Tensor h_in = Tensor::randn({T, C}, gen, 1.0, DType::f64);                   // (T, C)
  Tensor W1 = Tensor::randn({hidden, C}, gen, 1.0 / std::sqrt(C), DType::f64);      // (4C, C)
  Tensor b1 = Tensor::zeros({hidden}, DType::f64);                                   // (4C)
  Tensor W2 = Tensor::randn({C, hidden}, gen, 1.0 / std::sqrt(hidden), DType::f64); // (C, 4C)
  Tensor b2 = Tensor::zeros({C}, DType::f64);                                        // (C)
  Tensor a = linear(h_in, W1, b1);   // (T, 4C): each token on its own, no mixing across T
  Tensor g = gelu(a);                // (T, 4C)
  Tensor y = linear(g, W2, b2);      // (T, C)
  // [/excerpt]
  show(out, "x", h_in, 3);
  show(out, "x W1^T + b1", a, 2, 32);
  show(out, "gelu(...)", g, 2, 32);
  show(out, "y", y, 3);
  r.shapes = {h_in.size(0), h_in.size(1), a.size(0), a.size(1), y.size(0), y.size(1)};
  r.params_768 = 768 * 3072 + 3072 + 3072 * 768 + 768;
  out << "parameters for C = 768 (hidden 3072): 768*3072 + 3072 + 3072*768 + 768 = " << r.params_768
      << "\n  (twice the 2,362,368 of the attention block that precedes it)\n";

  heading(out, 4, "Dead units: where no gradient flows");
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
  out << "on 64 tokens x 64 hidden units at initialisation:\n"
      << "  ReLU passes no gradient for " << fmt(100 * r.dead_relu_fraction, 1) << "% of them\n"
      << "  GELU for " << fmt(100 * r.zero_gelu_grad_fraction, 1)
      << "% (its slope is small for negative inputs, but not zero)\n"
      << "a ReLU unit whose input is negative for every token gets no gradient at all and stays dead.\n";
  return r;
}

}  // namespace sf::lessons
