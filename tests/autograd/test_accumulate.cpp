// Fused backward kernels add straight into an existing leaf .grad (the parameters' flat
// gradient buffer). That path must give exactly old grad + fresh gradient.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "autograd/ops.h"

using namespace sf;

namespace {

// Runs loss(params) twice: once with no .grad (fresh), once with .grad preset to `old`;
// the second must equal old + fresh for every parameter.
void check_direct_accumulation(std::vector<Tensor> params, const std::function<Tensor()>& loss) {
  loss().backward();
  std::vector<Tensor> fresh;
  for (Tensor& p : params) fresh.push_back(p.grad().clone());
  Generator gen(11);
  std::vector<Tensor> old;
  for (Tensor& p : params) {
    old.push_back(Tensor::randn(p.shape(), gen, 1.0, p.dtype()));
    p.set_grad(old.back().clone());
  }
  loss().backward();
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<double> got = params[i].grad().to_vector(), a = old[i].to_vector(), b = fresh[i].to_vector();
    double worst = 0;
    for (size_t j = 0; j < got.size(); ++j) worst = std::max(worst, std::fabs(got[j] - (a[j] + b[j])));
    CHECK(worst < 1e-12);
  }
}

}  // namespace

TEST_CASE("linear adds dW and db into existing gradients") {
  Generator gen(1);
  Tensor x = Tensor::randn({2, 3, 4}, gen, 1.0, DType::f64);
  Tensor w = Tensor::randn({5, 4}, gen, 1.0, DType::f64).requires_grad_();
  Tensor b = Tensor::randn({5}, gen, 1.0, DType::f64).requires_grad_();
  Tensor proj = Tensor::randn({2, 3, 5}, gen, 1.0, DType::f64);
  check_direct_accumulation({w, b}, [&] { return sum(linear(x, w, b) * proj); });
}

TEST_CASE("embedding scatter-adds into an existing gradient") {
  Generator gen(2);
  Tensor w = Tensor::randn({6, 3}, gen, 1.0, DType::f64).requires_grad_();
  IntTensor ids({2, 3}, {1, 4, 1, 0, 1, 5});
  Tensor proj = Tensor::randn({2, 3, 3}, gen, 1.0, DType::f64);
  check_direct_accumulation({w}, [&] { return sum(embedding(w, ids) * proj); });
}

TEST_CASE("layer_norm adds dweight and dbias into existing gradients") {
  Generator gen(3);
  Tensor x = Tensor::randn({3, 5}, gen, 1.0, DType::f64);
  Tensor w = Tensor::randn({5}, gen, 1.0, DType::f64).requires_grad_();
  Tensor b = Tensor::randn({5}, gen, 1.0, DType::f64).requires_grad_();
  Tensor proj = Tensor::randn({3, 5}, gen, 1.0, DType::f64);
  check_direct_accumulation({w, b}, [&] { return sum(layer_norm(x, w, b) * proj); });
}
