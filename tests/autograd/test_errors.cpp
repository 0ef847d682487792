// Every documented error has a one-line message naming the op and what is wrong. We check the
// exception type and the message (not just that something was thrown).
#include <doctest/doctest.h>

#include "autograd/graph.h"
#include "autograd/ops.h"

using namespace sf;

static Tensor t(const Shape& shape, DType dtype = DType::f32) { return Tensor::ones(shape, dtype); }

TEST_CASE("shape mismatch names the op and both shapes") {
  CHECK_THROWS_WITH_AS(add(t({2, 3}), t({4})), "add: shapes (2, 3) and (4) cannot be broadcast together", ShapeError);
  CHECK_THROWS_WITH_AS(sub(t({2, 3}), t({3, 2})), "sub: shapes (2, 3) and (3, 2) cannot be broadcast together",
                       ShapeError);
  CHECK_THROWS_WITH_AS(mul(t({5}), t({2, 3})), "mul: shapes (5) and (2, 3) cannot be broadcast together", ShapeError);
  CHECK_THROWS_WITH_AS(div(t({2, 1, 3}), t({2, 2})), "div: shapes (2, 1, 3) and (2, 2) cannot be broadcast together",
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(t({2, 3}), t({4, 5})), "matmul: inner dimensions differ, (2, 3) @ (4, 5) (3 vs 4)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul_bt(t({2, 3}), t({2, 5})), "matmul: inner dimensions differ, (2, 3) @ (2, 5)^T (3 vs 5)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(t({3}), t({3, 2})),
                       "matmul: both operands need at least 2 dimensions, got (3) and (3, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(matmul(t({2, 2, 3}), t({3, 3, 4})),
                       "matmul: batch dimensions of (2, 2, 3) and (3, 3, 4) cannot be broadcast together", ShapeError);
  CHECK_THROWS_WITH_AS(linear(t({4, 3}), t({5, 2})),
                       "linear: input (4, 3) does not fit weight (5, 2) (expected (..., in) and (out, in))",
                       ShapeError);
  CHECK_THROWS_WITH_AS(linear(t({4, 3}), t({5, 3}), t({4})), "linear: bias (4) does not fit weight (5, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(concat({t({2, 3}), t({3, 3})}, 1), "concat: shape (3, 3) does not match (2, 3) outside axis 1",
                       ShapeError);
  CHECK_THROWS_WITH_AS(masked_fill(t({2, 3}), t({2, 2}), 0.0),
                       "masked_fill: shapes (2, 3) and (2, 2) cannot be broadcast together", ShapeError);
  CHECK_THROWS_WITH_AS(masked_fill(t({3}), t({2, 3}), 0.0), "masked_fill: mask (2, 3) does not broadcast to (3)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(layer_norm(t({2, 4}), t({3}), Tensor()),
                       "layer_norm: parameter (3) float32 does not fit input (2, 4) float32", ShapeError);
  CHECK_THROWS_WITH_AS(expand(t({2, 3}), {3, 3}), "expand: shapes (2, 3) and (3, 3) cannot be broadcast together",
                       ShapeError);
  CHECK_THROWS_WITH_AS(expand(t({2, 3}), {3}), "expand: shape (2, 3) cannot be expanded to (3)", ShapeError);
  CHECK_THROWS_WITH_AS(sum_to(t({2, 3}), {4}), "sum_to: shape (2, 3) does not broadcast from (4)", ShapeError);
  CHECK_THROWS_WITH_AS(permute(t({2, 3}), {0}), "permute: 1 axes given for a tensor of shape (2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(permute(t({2, 3}), {1, 1}), "permute: axis 1 repeated", ShapeError);
  CHECK_THROWS_WITH_AS(embedding(t({5}), IntTensor({1}, {0})), "embedding: weight must be (V, C), got (5)", ShapeError);
  CHECK_THROWS_WITH_AS(cross_entropy(t({4, 5}), IntTensor({3}, {0, 1, 2})),
                       "cross_entropy: 3 targets for logits of shape (4, 5) (4 rows)", ShapeError);
}

TEST_CASE("dtype mismatch names the op, both dtypes and shapes") {
  CHECK_THROWS_WITH_AS(add(t({2}), t({2}, DType::f64)), "add: dtype mismatch, float32 (2) vs float64 (2)", ShapeError);
  CHECK_THROWS_WITH_AS(mul(t({2, 3}, DType::f64), t({3})), "mul: dtype mismatch, float64 (2, 3) vs float32 (3)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(matmul(t({2, 3}), t({3, 2}, DType::f64)),
                       "matmul: dtype mismatch, float32 (2, 3) vs float64 (3, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(linear(t({2, 3}), t({4, 3}, DType::f64)),
                       "linear: dtype mismatch, float32 (2, 3) vs float64 (4, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(concat({t({2}), t({2}, DType::f64)}, 0), "concat: dtype mismatch, float32 (2) vs float64 (2)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(t({2}).data<double>(), "data<float64>: tensor is float32", ShapeError);
}

TEST_CASE("backward of a non-scalar needs a gradient of the same shape") {
  Tensor x = t({2, 3}).requires_grad_();
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH_AS(
      y.backward(), "backward: output of shape (2, 3) is not a scalar; pass a gradient of the same shape", ShapeError);
  CHECK_THROWS_WITH_AS(y.backward(t({3})), "backward: gradient of shape (3) for an output of shape (2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(t({2}).backward(t({2})),
                       "backward: this tensor does not require grad (no input had requires_grad set)", Error);
}

TEST_CASE("backward through a freed graph names the op and the fix") {
  Tensor x = t({2}).requires_grad_();
  Tensor y = sum(exp(x));
  y.backward();
  CHECK_THROWS_WITH_AS(
      y.backward(),
      "backward: the graph through 'sum' was freed by an earlier backward(); pass retain_graph=true to the first call",
      Error);
}

TEST_CASE("out-of-range token ids and targets name the value and its position") {
  Tensor w = t({5, 3});
  CHECK_THROWS_WITH_AS(embedding(w, IntTensor({2, 2}, {0, 1, 5, 2})),
                       "embedding: token id 5 at position 2 is outside the vocabulary [0, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(embedding(w, IntTensor({1}, {-1})),
                       "embedding: token id -1 at position 0 is outside the vocabulary [0, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(cross_entropy(t({2, 4}), IntTensor({2}, {3, 4})),
                       "cross_entropy: target 4 at position 1 is outside [0, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(cross_entropy(t({2, 4}), IntTensor({2}, {-2, 0})),
                       "cross_entropy: target -2 at position 0 is outside [0, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(cross_entropy(t({2, 4}), IntTensor({2}, {0, 1}), -100, 1.5),
                       "cross_entropy: label_smoothing must be in [0, 1], got 1.500000", ValueError);
}

TEST_CASE("reshape mismatch names both shapes") {
  CHECK_THROWS_WITH_AS(reshape(t({2, 3}), {4, 2}), "reshape: cannot view (2, 3) (6 elements) as (4, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(reshape(t({2, 3}), {4, -1}), "reshape: cannot view (2, 3) as (4, -1)", ShapeError);
  CHECK_THROWS_WITH_AS(reshape(t({2, 3}), {-1, -1}), "reshape: only one dimension can be -1 in (-1, -1)", ShapeError);
  CHECK_THROWS_WITH_AS(reshape(t({2, 3}), {-2, -3}), "reshape: negative dimension in (-2, -3)", ShapeError);
}

TEST_CASE("axis out of range names the op, the axis and the rank") {
  CHECK_THROWS_WITH_AS(sum(t({2, 3}), {2}), "sum: axis 2 is out of range for a tensor of rank 2", ShapeError);
  CHECK_THROWS_WITH_AS(sum(t({2, 3}), {0, -2}), "sum: axis -2 repeated", ShapeError);
  CHECK_THROWS_WITH_AS(mean(t({2, 3}), {-3}), "mean: axis -3 is out of range for a tensor of rank 2", ShapeError);
  CHECK_THROWS_WITH_AS(max(t({2, 3}), 5), "max: axis 5 is out of range for a tensor of rank 2", ShapeError);
  CHECK_THROWS_WITH_AS(softmax(t({2, 3}), 2), "softmax: axis 2 is out of range for a tensor of rank 2", ShapeError);
  CHECK_THROWS_WITH_AS(log_softmax(t({2, 3}), -3), "log_softmax: axis -3 is out of range for a tensor of rank 2",
                       ShapeError);
  CHECK_THROWS_WITH_AS(transpose(t({2, 3}), 0, 2), "transpose: axis 2 is out of range for a tensor of rank 2",
                       ShapeError);
  CHECK_THROWS_WITH_AS(slice(t({2, 3}), 3, 0, 1), "slice: axis 3 is out of range for a tensor of rank 2", ShapeError);
  CHECK_THROWS_WITH_AS(slice(t({2, 3}), 0, 0, 1, 0), "slice: step must be positive, got 0", ValueError);
  CHECK_THROWS_WITH_AS(concat({t({2, 3})}, -3), "concat: axis -3 is out of range for a tensor of rank 2", ShapeError);
  CHECK_THROWS_WITH_AS(t({2, 3}).size(2), "size: axis 2 is out of range for a tensor of rank 2", ShapeError);
}

TEST_CASE("requires_grad_ on a non-leaf is refused with the fix") {
  Tensor x = t({2}).requires_grad_();
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH_AS(y.requires_grad_(),
                       "requires_grad_: only leaf tensors can change requires_grad (use detach() first)", Error);
  CHECK_NOTHROW(y.detach().requires_grad_());
}

TEST_CASE("other documented errors") {
  CHECK_THROWS_WITH_AS(t({2, 3}).item(), "item: tensor of shape (2, 3) has 6 elements, expected 1", ShapeError);
  CHECK_THROWS_WITH_AS(t({2, 3}).at({2, 0}), "at: index 2 out of range for axis 0 of shape (2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(Tensor::from_vector({1, 2, 3}, {2, 2}), "from_vector: 3 values do not fill shape (2, 2)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(Tensor::zeros({2, -1}), "empty: negative dimension in shape (2, -1)", ShapeError);
  CHECK_THROWS_WITH_AS(Tensor().shape(), "use of an undefined Tensor", Error);
  Generator gen(1);
  CHECK_THROWS_WITH_AS(dropout(t({2}), 1.0, true, gen), "dropout: probability must be in [0, 1), got 1.000000",
                       ValueError);
  CHECK_THROWS_WITH_AS(gen.randint(0), "Generator::randint: n must be positive, got 0", Error);
  CHECK_THROWS_WITH_AS(gen.set_state({1, 2}), "Generator::set_state: expected 4 words, got 2", Error);
  Tensor x = t({2});
  CHECK_THROWS_WITH_AS(x.set_grad(t({3})), "set_grad: gradient (3) float32 does not match tensor (2) float32",
                       ShapeError);
}
