// Lesson 2: autograd by hand. A three-input expression, its graph, its gradients by the chain
// rule, by the engine, and by finite differences. Text: autograd.md.
#include <cmath>
#include <ostream>

#include "autograd/graph.h"
#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/autograd.h"
#include "lessons/common/pictures.h"

namespace sf::lessons {

// [excerpt: forward]
// L = a * tanh(a*b + c), in float64 so finite differences are accurate.
static Tensor expression(const Tensor& a, const Tensor& b, const Tensor& c) {
  Tensor u = (a * b).set_name("u = a*b");
  Tensor v = (u + c).set_name("v = u+c");
  Tensor w = tanh(v).set_name("w = tanh(v)");
  return (a * w).set_name("L = a*w");
}
// [/excerpt]

static Tensor leaf(double value, const char* name) {
  Tensor t = Tensor::scalar(value, DType::f64).requires_grad_();
  t.set_name(name);
  return t;
}

AutogradResult run_lesson_autograd(std::ostream& out) {
  AutogradResult r;
  const double a0 = 2.0, b0 = -1.0, c0 = 0.5;

  heading(out, 1, "The forward pass: L = a * tanh(a*b + c)", "前向计算：L = a * tanh(a*b + c)");
  Tensor a = leaf(a0, "a"), b = leaf(b0, "b"), c = leaf(c0, "c");
  Tensor L = expression(a, b, c);
  // Walk the graph to print every intermediate value (inputs before outputs).
  for (const Tensor& t : topological_order(L))
    out << "  " << t.name() << (t.name().size() < 12 ? std::string(12 - t.name().size(), ' ') : "") << " = "
        << fmt(t.item(), 6) << "\n";
  r.loss = L.item();

  heading(out, 2, "The graph the engine recorded: a picture and its Graphviz DOT",
          "引擎记录下的计算图：图片和它的 Graphviz DOT");
  r.dot = to_dot(L);
  draw_graphviz(out, "autograd_graph.png", [&] { return r.dot; });  // the DOT below, drawn by dot
  out << r.dot;
  out << tr(out, "(render it: ", "（画成图片：")
      << "scratchformer lesson autograd | sed -n '/^digraph/,/^}/p' | dot -Tpng -o graph.png" << tr(out, ")\n", "）\n");

  heading(out, 3, "The chain rule by hand, from L back to the inputs", "手算链式法则：从 L 倒推回输入");
  // [excerpt: by_hand]
  double u = a0 * b0, v = u + c0, w = std::tanh(v);
  double dL_dw = a0;                   // L = a*w
  double dL_dv = dL_dw * (1 - w * w);  // w = tanh(v): dw/dv = 1 - tanh^2
  double dL_du = dL_dv;                // v = u + c
  double dL_dc = dL_dv;
  double dL_db = dL_du * a0;      // u = a*b: du/db = a
  double dL_da = dL_du * b0 + w;  // a is used twice: through u (du/da = b) and directly in L
  // [/excerpt]
  out << "  dL/dw = a                      = " << fmt(dL_dw, 6) << "\n";
  out << "  dL/dv = dL/dw * (1 - w^2)      = " << fmt(dL_dv, 6) << "\n";
  out << "  dL/du = dL/dv * 1              = " << fmt(dL_du, 6) << "\n";
  out << "  dL/dc = dL/dv * 1              = " << fmt(dL_dc, 6) << "\n";
  out << "  dL/db = dL/du * a              = " << fmt(dL_db, 6) << "\n";
  out << tr(out, "  dL/da = dL/du * b + w (2 paths) = ", "  dL/da = dL/du * b + w（2 条路径）= ") << fmt(dL_da, 6)
      << "\n";
  r.by_hand = {dL_da, dL_db, dL_dc};

  heading(out, 4, "The engine: L.backward()", "交给引擎：L.backward()");
  // [excerpt: engine]
  Tensor a2 = leaf(a0, "a"), b2 = leaf(b0, "b"), c2 = leaf(c0, "c");
  Tensor L2 = expression(a2, b2, c2);
  L2.backward();  // visits the graph in reverse topological order, accumulating into .grad
  // [/excerpt]
  r.by_engine = {a2.grad().item(), b2.grad().item(), c2.grad().item()};
  out << "  a.grad = " << fmt(r.by_engine[0], 6) << "   b.grad = " << fmt(r.by_engine[1], 6)
      << "   c.grad = " << fmt(r.by_engine[2], 6) << "\n";
  out << tr(out, "  largest difference from the hand values: ", "  与手算结果的最大差值：")
      << fmt(max_abs_diff(r.by_hand, r.by_engine), 12) << "\n";

  heading(out, 5, "A finite-difference check: (L(x + h) - L(x - h)) / 2h",
          "用有限差分验证：(L(x + h) - L(x - h)) / 2h");
  // [excerpt: finite_difference]
  const double h = 1e-6;
  auto L_at = [&](double a, double b, double c) {
    NoGradGuard no_grad;  // plain evaluation, no graph
    return expression(Tensor::scalar(a, DType::f64), Tensor::scalar(b, DType::f64), Tensor::scalar(c, DType::f64))
        .item();
  };
  double fd_a = (L_at(a0 + h, b0, c0) - L_at(a0 - h, b0, c0)) / (2 * h);
  double fd_b = (L_at(a0, b0 + h, c0) - L_at(a0, b0 - h, c0)) / (2 * h);
  double fd_c = (L_at(a0, b0, c0 + h) - L_at(a0, b0, c0 - h)) / (2 * h);
  // [/excerpt]
  r.by_finite_difference = {fd_a, fd_b, fd_c};
  out << tr(out, "  numeric dL/da = ", "  数值梯度 dL/da = ") << fmt(fd_a, 6) << "   dL/db = " << fmt(fd_b, 6)
      << "   dL/dc = " << fmt(fd_c, 6) << "\n";
  double err = max_abs_diff(r.by_engine, r.by_finite_difference);
  out << tr(out, "  largest |engine - numeric| = ", "  |引擎 - 数值| 的最大值 = ") << fmt_sci(err, 1)
      << tr(out,
            "\n  (the error of a central difference is about h^2 = 1e-12 times the third derivative,\n"
            "   plus rounding of about 1e-16 / h = 1e-10)\n",
            "\n  （中心差分的截断误差约为 h^2 = 1e-12 乘以三阶导数，\n"
            "   再加上约 1e-16 / h = 1e-10 的舍入误差）\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_autograd() {
  return {"autograd", "Autograd by hand: a scalar graph, the chain rule, finite differences",
          "手写自动微分：标量计算图、链式法则、有限差分", printing(run_lesson_autograd)};
}

}  // namespace sf::lessons
