// Fused backward kernels add straight into an existing leaf .grad (the parameters' flat
// gradient buffer). That path must give exactly old grad + fresh gradient.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "autograd/cpu/kernels.h"
#include "autograd/cpu/threads.h"
#include "autograd/graph.h"
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

// 520 rows and x wanting its gradient too: linear's panel backward, whose chunk 0 adds into .grad
TEST_CASE("linear and linear_gelu in the panel backward add dW and db into existing gradients") {
  for (bool with_gelu : {false, true}) {
    Generator gen(2);
    Tensor x = Tensor::randn({2, 260, 6}, gen, 1.0, DType::f64).requires_grad_();
    Tensor w = Tensor::randn({10, 6}, gen, 1.0, DType::f64).requires_grad_();
    Tensor b = Tensor::randn({10}, gen, 1.0, DType::f64).requires_grad_();
    Tensor proj = Tensor::randn({2, 260, 10}, gen, 1.0, DType::f64);
    INFO("with GELU " << with_gelu);
    check_direct_accumulation(
        {x, w, b}, [&] { return sum((with_gelu ? linear_gelu(x, w, b, GeluApprox::tanh) : linear(x, w, b)) * proj); });
  }
}

// The panel backward cuts the rows into chunks fixed by the shape, so the thread count does not
// change a bit of dx, dW or db (here 4 chunks, each added in order whichever thread ran it).
TEST_CASE("linear's panel backward gives the same bits on 1 and 2 threads") {
  std::vector<std::vector<double>> grads[2];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Generator gen(3);
    Tensor x = Tensor::randn({4100, 12}, gen, 1.0).requires_grad_();
    Tensor w = Tensor::randn({20, 12}, gen, 0.3).requires_grad_();
    Tensor b = Tensor::randn({20}, gen, 1.0).requires_grad_();
    Tensor dy = Tensor::randn({4100, 20}, gen, 1.0);
    linear(x, w, b).backward(dy);
    for (Tensor* t : {&x, &w, &b}) grads[threads - 1].push_back(t->grad().to_vector());
  }
  set_num_threads(0);
  for (size_t i = 0; i < 3; ++i) CHECK(grads[0][i] == grads[1][i]);
}

// A thread that has finished its chunks computes the last pieces of dx of a chunk still running
// (making those rows of dy, and for linear_gelu its GELU, again for itself): the same bits as the
// chunk's own thread would give. Two threads are run until that has happened, checked every time.
TEST_CASE("linear's panel backward: pieces of dx taken over by another thread give the same bits") {
  for (bool with_gelu : {false, true}) {
    INFO("with GELU " << with_gelu);
    Generator gen(4);
    Tensor x0 = Tensor::randn({2048, 24}, gen, 1.0), w0 = Tensor::randn({40, 24}, gen, 0.3);
    Tensor b0 = Tensor::randn({40}, gen, 1.0), dy = Tensor::randn({2048, 40}, gen, 1.0);
    auto grads = [&] {
      Tensor x = x0.clone().requires_grad_(), w = w0.clone().requires_grad_(), b = b0.clone().requires_grad_();
      (with_gelu ? linear_gelu(x, w, b, GeluApprox::tanh) : linear(x, w, b)).backward(dy);
      return std::vector<std::vector<double>>{x.grad().to_vector(), w.grad().to_vector(), b.grad().to_vector()};
    };
    set_num_threads(1);
    const std::vector<std::vector<double>> one = grads();
    set_num_threads(2);
    const int64_t before = kernels::linear_dx_pieces_taken_over();
    for (int run = 0; run < 500 && kernels::linear_dx_pieces_taken_over() == before; ++run) {
      CAPTURE(run);
      const std::vector<std::vector<double>> two = grads();
      for (size_t i = 0; i < 3; ++i) CHECK(two[i] == one[i]);
    }
    CHECK(kernels::linear_dx_pieces_taken_over() > before);
  }
  set_num_threads(0);
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

// accumulate_grad adds (and Tensor::clone copies) over the thread pool: one thread and two give the
// very same bits, which are g1 and then g1 + g2 elementwise; a g nobody else holds is taken as it
// is, a shared one is copied and left alone; a wrong shape throws.
TEST_CASE("accumulate_grad: first gradient taken or copied, then added, the same bits on 1 and 2 threads") {
  Generator gen(12);
  const Shape shape{300, 131};  // above the elementwise grain: the pool splits it
  Tensor g1 = Tensor::randn(shape, gen, 1.0), g2 = Tensor::randn(shape, gen, 1.0);
  std::vector<double> expected = g1.to_vector();  // float values, added in float below
  const std::vector<double> second = g2.to_vector();
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] = static_cast<float>(static_cast<float>(expected[i]) + static_cast<float>(second[i]));
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    set_num_threads(threads);
    Tensor t = Tensor::zeros(shape).requires_grad_();
    Tensor shared = g1.clone();  // still held here: must be copied, not taken
    accumulate_grad(t, shared);
    CHECK(t.grad().to_vector() == g1.to_vector());
    CHECK(t.grad().data<float>() != shared.data<float>());
    accumulate_grad(t, g2);  // adds into the existing .grad
    CHECK(t.grad().to_vector() == expected);
    CHECK(shared.to_vector() == g1.to_vector());  // the shared gradient was left alone
    Tensor taken = Tensor::zeros(shape).requires_grad_();
    Tensor only = g2.clone();
    const float* where = only.data<float>();
    accumulate_grad(taken, std::move(only));  // nobody else holds it: taken as it is
    CHECK(taken.grad().data<float>() == where);
    CHECK_THROWS_AS(accumulate_grad(taken, Tensor::zeros({3})), ShapeError);
  }
  set_num_threads(0);
}

// The engine hands a node its output's gradient (no reference kept) unless that output retains
// it, and add passes the buffer on to its first input: x's .grad is the very buffer `emit`
// created, y's a copy with the same values. With z retaining its gradient, both are copies.
TEST_CASE("backward hands a temporary gradient over: add's first input takes the buffer itself") {
  Generator gen(13);
  for (bool retain : {false, true}) {
    CAPTURE(retain);
    Tensor x = Tensor::randn({4, 5}, gen, 1.0).requires_grad_();
    Tensor y = Tensor::randn({4, 5}, gen, 1.0).requires_grad_();
    Tensor z = add(x, y);
    if (retain) z.retain_grad();
    const float* made = nullptr;  // the buffer emit's backward gives z
    Tensor w = record(z.detach().clone(), "emit", {z}, [z, &made](Tensor dout) {
      Tensor g = mul(dout, Tensor::full(dout.shape(), 3.0));
      made = g.data<float>();
      accumulate_grad(z, std::move(g));
    });
    w.backward(Tensor::ones(w.shape()));
    REQUIRE(made != nullptr);
    CHECK(x.grad().to_vector() == std::vector<double>(20, 3.0));
    CHECK(y.grad().to_vector() == std::vector<double>(20, 3.0));
    CHECK(y.grad().data<float>() != made);
    if (retain) {
      CHECK(z.grad().data<float>() == made);
      CHECK(x.grad().data<float>() != made);
    } else {
      CHECK(x.grad().data<float>() == made);
    }
  }
}

// layer_norm's backward adds dx straight into a .grad that x has already gathered (the residual
// stream's, in a Pre-LN block): the result must be that gradient + dx with the bits of
// accumulate_grad's sum, float32, rows with and without a SIMD tail, on 1 and 2 threads.
TEST_CASE("layer_norm adds dx into the gradient x has gathered so far: old + fresh, bit for bit") {
  for (int64_t C : {7, 64, 130})
    for (int threads : {1, 2}) {
      set_num_threads(threads);
      Generator gen(C);
      const int64_t N = 70;
      Tensor x = Tensor::randn({N, C}, gen, 2.0).requires_grad_();
      Tensor w = Tensor::randn({C}, gen, 1.0).requires_grad_(), b = Tensor::randn({C}, gen, 1.0).requires_grad_();
      Tensor r = Tensor::randn({N, C}, gen, 1.0);
      auto run = [&] { sum(layer_norm(x, w, b, 1e-5) * r).backward(); };
      run();
      const std::vector<double> fresh = x.grad().to_vector();
      const Tensor old = Tensor::randn({N, C}, gen, 1.0);
      x.set_grad(old.clone());
      run();
      const std::vector<double> got = x.grad().to_vector(), a = old.to_vector();
      INFO("C " << C << " threads " << threads);
      std::vector<double> want(a.size());
      for (size_t i = 0; i < a.size(); ++i) want[i] = static_cast<float>(a[i]) + static_cast<float>(fresh[i]);
      CHECK(got == want);
    }
  set_num_threads(0);
}
