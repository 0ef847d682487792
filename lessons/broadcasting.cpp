// Lesson 3: tensors, broadcasting and gradcheck. Why the backward of a broadcasting op must sum
// the gradient back down to each input's shape, and how gradcheck catches a backward that is
// wrong. Text: broadcasting.md.
#include <ostream>

#include "autograd/gradcheck.h"
#include "autograd/graph.h"
#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/broadcasting.h"

namespace sf::lessons {

// [excerpt: bias_add]
// y = x + bias for x (N, C) and bias (C), written as its own op to show what backward must do.
// Forward: bias is broadcast, i.e. reused by every row. Backward: every row's gradient flows
// into the same bias, so the contributions are summed over the rows.
enum class BiasBackward { correct, forgets_to_reduce, only_first_row };
static Tensor bias_add(const Tensor& x, const Tensor& bias, BiasBackward kind) {
  Tensor out = add(x.detach(), bias.detach());  // (N, C), computed without a graph
  return record(out, "bias_add", {x, bias}, [x, bias, kind](const Tensor& dout) {
    accumulate_grad(x, dout);                                                       // (N, C): same shape, nothing to do
    if (kind == BiasBackward::correct) accumulate_grad(bias, sum(dout, {0}));       // (N, C) -> (C): sum over rows
    else if (kind == BiasBackward::forgets_to_reduce) accumulate_grad(bias, dout);  // (N, C) into a (C) tensor
    else accumulate_grad(bias, reshape(slice(dout, 0, 0, 1), {-1}));                // drops rows 1..N-1
  });
}
// [/excerpt]

BroadcastingResult run_lesson_broadcasting(std::ostream& out) {
  BroadcastingResult r;

  heading(out, 1, "Broadcasting: (2, 3) + (3)", "广播：(2, 3) + (3)");
  Tensor x = Tensor::from_vector({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f64).requires_grad_();
  Tensor b = Tensor::from_vector({10, 20, 30}, {3}, DType::f64).requires_grad_();
  r.broadcast_shape = broadcast_shapes(x.shape(), b.shape(), "add");
  out << tr(out, "shapes are aligned from the right; a missing or size-1 dimension is repeated:\n",
            "形状从右往左对齐；缺失的维度或大小为 1 的维度会被重复：\n")
      << "  " << shape_str(x.shape()) << " + " << shape_str(b.shape()) << " -> " << shape_str(r.broadcast_shape)
      << "\n";
  show(out, "x", x, 1);
  show(out, "b", b, 1);
  show(out, "x + b", add(x, b).detach(), 1);

  heading(out, 2, "Backward sums over the broadcast dimension", "反向传播沿广播出来的维度求和");
  // [excerpt: reduce]
  Tensor g = Tensor::from_vector({0.1, 0.2, 0.3, 1.0, 2.0, 3.0}, {2, 3}, DType::f64);
  Tensor L = sum(add(x, b) * g);  // dL/d(x + b) = g, shape (2, 3)
  L.backward();
  // b[j] was added to x[0, j] and to x[1, j]: it receives g[0, j] + g[1, j].
  // [/excerpt]
  show(out, tr(out, "upstream gradient g = dL/dy", "上游梯度 g = dL/dy"), g, 1);
  show(out, "x.grad", x.grad(), 1);
  show(out, tr(out, "b.grad (summed over rows)", "b.grad（按行求和）"), b.grad(), 1);
  r.bias_grad = b.grad().to_vector();

  heading(out, 3, "Both inputs broadcast: (4, 1) * (3) -> (4, 3)", "两个输入都被广播：(4, 1) * (3) -> (4, 3)");
  Tensor col = Tensor::from_vector({1, 2, 3, 4}, {4, 1}, DType::f64).requires_grad_();
  Tensor row = Tensor::from_vector({1, 10, 100}, {3}, DType::f64).requires_grad_();
  Tensor prod = col * row;
  show(out, "col * row", prod.detach(), 0);
  sum(prod).backward();
  show(out, tr(out, "col.grad = sum over columns of row", "col.grad = row 沿列求和"), col.grad(), 0);
  show(out, tr(out, "row.grad = sum over rows of col", "row.grad = col 沿行求和"), row.grad(), 0);
  r.col_grad_shape = col.grad().shape();
  r.row_grad_shape = row.grad().shape();

  heading(out, 4, "A backward that forgets to reduce", "忘了求和的反向传播");
  Tensor x2 = x.detach().clone().requires_grad_(), b2 = b.detach().clone().requires_grad_();
  try {
    sum(bias_add(x2, b2, BiasBackward::forgets_to_reduce)).backward();
    r.unreduced_error = tr(out, "(no error)", "（没有报错）");
  } catch (const ShapeError& e) { r.unreduced_error = e.what(); }
  out << tr(out, "the engine refuses a gradient whose shape is not its tensor's:\n  ",
            "梯度的形状与张量本身不一致时，引擎拒绝接受（错误信息保持英文）：\n  ")
      << r.unreduced_error << "\n";

  heading(out, 5, "gradcheck: every Jacobian entry against central differences",
          "gradcheck：雅可比矩阵的每个元素都与中心差分比较");
  // [excerpt: gradcheck]
  Generator gen(2);
  Tensor xs = Tensor::randn({2, 3}, gen, 1.0, DType::f64).requires_grad_();
  Tensor bs = Tensor::randn({3}, gen, 1.0, DType::f64).requires_grad_();
  auto check = [&](BiasBackward kind) {
    return gradcheck([kind](const std::vector<Tensor>& in) { return bias_add(in[0], in[1], kind); }, {xs, bs});
  };
  GradcheckResult good = check(BiasBackward::correct);
  GradcheckResult bad = check(BiasBackward::only_first_row);  // right shape, wrong values
  // [/excerpt]
  out << tr(out, "correct backward:        ", "正确的反向传播：    ")
      << (good.ok ? tr(out, "pass", "通过") : tr(out, "FAIL", "失败")) << tr(out, " (", "（") << good.checked
      << tr(out, " Jacobian entries)\n", " 个雅可比元素）\n");
  out << tr(out, "first-row-only backward: ", "只传第一行的反向传播：")
      << (bad.ok ? tr(out, "pass", "通过") : tr(out, "FAIL", "失败")) << "\n  " << bad.describe() << "\n";
  r.gradcheck_correct_ok = good.ok;
  r.gradcheck_buggy_ok = bad.ok;
  r.gradcheck_entries = good.checked;
  r.buggy_analytic = bad.analytic;
  r.buggy_numeric = bad.numeric;
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_broadcasting() {
  return {"broadcasting", "Tensors, broadcasting and gradcheck: why backward reduces",
          "张量、广播与 gradcheck：反向传播为什么要求和", printing(run_lesson_broadcasting)};
}

}  // namespace sf::lessons
