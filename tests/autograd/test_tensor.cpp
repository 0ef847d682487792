// Basic Tensor behaviour: creation, access, printing, backward bookkeeping.
#include <doctest/doctest.h>

#include "autograd/graph.h"
#include "autograd/ops.h"

using namespace sf;

TEST_CASE("a node used twice receives the sum of both gradients") {
  Tensor x = Tensor::from_vector({1, 2, 3}, {3}, DType::f64).requires_grad_();
  Tensor y = sum(x * x + x);  // dy/dx = 2x + 1
  y.backward();
  CHECK(x.grad().to_vector() == std::vector<double>{3, 5, 7});
}

TEST_CASE("broadcast add reduces the gradient back to each input's shape") {
  Tensor a = Tensor::ones({2, 3}, DType::f64).requires_grad_();
  Tensor b = Tensor::from_vector({1, 2, 3}, {3}, DType::f64).requires_grad_();
  sum(a * b).backward();
  CHECK(b.grad().shape() == Shape{3});
  CHECK(b.grad().to_vector() == std::vector<double>{2, 2, 2});
  CHECK(a.grad().to_vector() == std::vector<double>{1, 2, 3, 1, 2, 3});
}

TEST_CASE("matmul matches a hand computation") {
  Tensor a = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector({5, 6, 7, 8}, {2, 2});
  CHECK(matmul(a, b).to_vector() == std::vector<double>{19, 22, 43, 50});
  CHECK(matmul_at(a, b).to_vector() == std::vector<double>{26, 30, 38, 44});
}

TEST_CASE("a second backward through a freed graph is a clear error") {
  Tensor x = Tensor::from_vector({1, 2}, {2}).requires_grad_();
  Tensor y = sum(exp(x));
  y.backward();
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("freed"), Error);
}
