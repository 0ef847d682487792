// Each fused op (softmax, log_softmax, cross_entropy, layer_norm, gelu, linear_gelu) against the same math
// composed from primitives: the value and the gradient of sum(out * W) for random W, in float64,
// must agree to |fused - composed| <= 1e-12 * max(1, |composed|).
#include <doctest/doctest.h>

#include <cmath>
#include <functional>

#include "autograd/cpu/threads.h"
#include "autograd/graph.h"
#include "autograd/ops.h"

using namespace sf;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

static void check_close(const Tensor& a, const Tensor& b, const char* what) {
  INFO(what);
  REQUIRE(a.defined());
  REQUIRE(b.defined());
  REQUIRE(a.shape() == b.shape());
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i << ": fused " << x[i] << " composed " << y[i]);
    CHECK(std::fabs(x[i] - y[i]) <= 1e-12 * std::max(1.0, std::fabs(y[i])));
  }
}

// Runs fused and composed on fresh copies of the same inputs; compares values and gradients.
static void compare(const Fn& fused, const Fn& composed, const std::vector<Shape>& shapes, uint64_t seed) {
  Generator gen(seed);
  std::vector<Tensor> base;
  for (const Shape& s : shapes) base.push_back(Tensor::randn(s, gen, 1.5, DType::f64));
  auto fresh = [&] {
    std::vector<Tensor> in;
    for (const Tensor& t : base) in.push_back(t.clone().requires_grad_());
    return in;
  };
  std::vector<Tensor> a = fresh(), b = fresh();
  Tensor ya = fused(a), yb = composed(b);
  check_close(ya, yb, "value");
  Tensor w = Tensor::randn(ya.shape(), gen, 1.0, DType::f64);
  ya.backward(w);
  yb.backward(w);
  for (size_t i = 0; i < a.size(); ++i)
    check_close(a[i].grad(), b[i].grad(), ("gradient of input " + std::to_string(i)).c_str());
}

// ---- compositions from primitives ----
static Tensor softmax_composed(const Tensor& x, int64_t axis) {
  Tensor e = exp(x - max(x, axis, true));
  return e / sum(e, {axis}, true);
}
static Tensor log_softmax_composed(const Tensor& x, int64_t axis) {
  Tensor shifted = x - max(x, axis, true);
  return shifted - log(sum(exp(shifted), {axis}, true));
}
// -(1/kept) sum_i sum_j q_ij log_softmax(x)_ij with q = (1-eps) onehot(t_i) + eps/V for kept rows.
static Tensor cross_entropy_composed(const Tensor& logits, const IntTensor& t, int ignore, double eps) {
  int64_t V = logits.size(-1), N = t.numel(), kept = 0;
  std::vector<double> q(static_cast<size_t>(N * V), 0.0);
  for (int64_t i = 0; i < N; ++i) {
    if (t[i] == ignore) continue;
    ++kept;
    for (int64_t j = 0; j < V; ++j) q[i * V + j] = eps / V + (j == t[i] ? 1 - eps : 0);
  }
  Tensor qt = Tensor::from_vector(q, {N, V}, DType::f64);
  return -sum(log_softmax_composed(reshape(logits, {N, V}), -1) * qt) / static_cast<double>(kept);
}
static Tensor layer_norm_composed(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  Tensor xc = x - mean(x, {-1}, true);
  Tensor y = xc / sqrt(mean(xc * xc, {-1}, true) + eps);
  if (w.defined()) y = y * w;
  if (b.defined()) y = y + b;
  return y;
}
static Tensor gelu_tanh_composed(const Tensor& x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * pow(x, 3.0))));
}

TEST_CASE("fused softmax equals exp(x - max) / sum") {
  for (int64_t axis : {-1, 0, 1}) {
    CAPTURE(axis);
    compare([axis](auto& x) { return softmax(x[0], axis); }, [axis](auto& x) { return softmax_composed(x[0], axis); },
            {{2, 3, 4}}, 1 + axis);
  }
  // partly masked rows (-inf entries): the fused kernel and the composition agree on them too
  Tensor mask = Tensor::from_vector({0, 1, 1, 0, 0, 1, 0, 0, 0}, {3, 3}, DType::f64);
  compare([&](auto& x) { return softmax(masked_fill(x[0], mask, -INFINITY), -1); },
          [&](auto& x) { return softmax_composed(masked_fill(x[0], mask, -INFINITY), -1); }, {{2, 3, 3}}, 9);
}

TEST_CASE("fused softmax gives zeros (not NaN) for a fully masked row") {
  Tensor x = Tensor::full({2, 3}, -INFINITY, DType::f64);
  x.data<double>()[3] = 0.5;
  std::vector<double> y = softmax(x, -1).to_vector();
  CHECK(y == std::vector<double>{0, 0, 0, 1, 0, 0});
}

TEST_CASE("fused log_softmax equals x - max - log(sum(exp(x - max)))") {
  for (int64_t axis : {-1, 0, 1}) {
    CAPTURE(axis);
    compare([axis](auto& x) { return log_softmax(x[0], axis); },
            [axis](auto& x) { return log_softmax_composed(x[0], axis); }, {{2, 3, 4}}, 11 + axis);
  }
  // large logits: both stay finite thanks to the max shift
  compare([](auto& x) { return log_softmax(x[0] * 300.0, -1); },
          [](auto& x) { return log_softmax_composed(x[0] * 300.0, -1); }, {{3, 5}}, 15);
}

TEST_CASE("fused cross_entropy equals -mean of smoothed one-hot times log_softmax") {
  struct Case {
    Shape shape;
    IntTensor targets;
    int ignore;
    double eps;
  };
  const Case cases[] = {
      {{4, 5}, IntTensor({4}, {1, 0, 4, 2}), -100, 0.0},
      {{2, 3, 5}, IntTensor({2, 3}, {1, 0, 4, 2, 2, 3}), -100, 0.0},
      {{4, 5}, IntTensor({4}, {1, -100, 4, -100}), -100, 0.0},
      {{4, 5}, IntTensor({4}, {1, 0, 4, 2}), -100, 0.1},
      {{4, 5}, IntTensor({4}, {1, 3, 4, 3}), 3, 0.25},
      {{3, 7}, IntTensor({3}, {6, 0, 2}), -100, 1.0},
  };
  uint64_t seed = 20;
  for (const Case& c : cases) {
    CAPTURE(c.eps);
    CAPTURE(c.ignore);
    compare([&](auto& x) { return cross_entropy(x[0], c.targets, c.ignore, c.eps); },
            [&](auto& x) { return cross_entropy_composed(x[0], c.targets, c.ignore, c.eps); }, {c.shape}, seed++);
  }
}

TEST_CASE("fused layer_norm equals (x - mean) / sqrt(var + eps) * w + b") {
  compare([](auto& x) { return layer_norm(x[0], x[1], x[2]); },
          [](auto& x) { return layer_norm_composed(x[0], x[1], x[2], 1e-5); }, {{2, 3, 5}, {5}, {5}}, 30);
  compare([](auto& x) { return layer_norm(x[0], x[1], Tensor(), 0.1); },
          [](auto& x) { return layer_norm_composed(x[0], x[1], Tensor(), 0.1); }, {{4, 6}, {6}}, 31);
  compare([](auto& x) { return layer_norm(x[0], Tensor(), x[1]); },
          [](auto& x) { return layer_norm_composed(x[0], Tensor(), x[1], 1e-5); }, {{4, 6}, {6}}, 32);
  compare([](auto& x) { return layer_norm(x[0], Tensor(), Tensor()); },
          [](auto& x) { return layer_norm_composed(x[0], Tensor(), Tensor(), 1e-5); }, {{3, 8}}, 33);
  // rows wider than a SIMD register, with and without a ragged tail: the vector loops and the
  // scalar tail of each row kernel
  compare([](auto& x) { return layer_norm(x[0], x[1], x[2]); },
          [](auto& x) { return layer_norm_composed(x[0], x[1], x[2], 1e-5); }, {{3, 37}, {37}, {37}}, 35);
  compare([](auto& x) { return layer_norm(x[0], Tensor(), x[1]); },
          [](auto& x) { return layer_norm_composed(x[0], Tensor(), x[1], 1e-5); }, {{2, 64}, {64}}, 36);
  compare([](auto& x) { return layer_norm(x[0], x[1], Tensor()); },
          [](auto& x) { return layer_norm_composed(x[0], x[1], Tensor(), 1e-5); }, {{70, 19}, {19}}, 37);
  // rows with a large mean: the two-pass variance stays accurate
  compare([](auto& x) { return layer_norm(x[0] + 1000.0, x[1], x[2]); },
          [](auto& x) { return layer_norm_composed(x[0] + 1000.0, x[1], x[2], 1e-5); }, {{2, 8}, {8}, {8}}, 34);
}

TEST_CASE("fused gelu (tanh form) equals 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))") {
  compare([](auto& x) { return gelu(x[0], GeluApprox::tanh); }, [](auto& x) { return gelu_tanh_composed(x[0]); },
          {{3, 7}}, 40);
}

// The exact form needs erf, which is not a primitive: it is checked against the formula
// x Phi(x), d/dx = Phi(x) + x phi(x), evaluated here with std::erf per element.
TEST_CASE("fused gelu (erf form) equals x Phi(x) with derivative Phi(x) + x phi(x)") {
  Generator gen(41);
  Tensor x = Tensor::randn({3, 7}, gen, 2.0, DType::f64).requires_grad_();
  Tensor y = gelu(x);
  sum(y).backward();
  std::vector<double> xv = x.to_vector(), yv = y.to_vector(), gv = x.grad().to_vector();
  for (size_t i = 0; i < xv.size(); ++i) {
    double cdf = 0.5 * (1 + std::erf(xv[i] / std::sqrt(2.0)));
    double pdf = std::exp(-0.5 * xv[i] * xv[i]) / std::sqrt(2 * M_PI);
    CHECK(std::fabs(yv[i] - xv[i] * cdf) <= 1e-12 * std::max(1.0, std::fabs(yv[i])));
    CHECK(std::fabs(gv[i] - (cdf + xv[i] * pdf)) <= 1e-12);
  }
}

// linear_gelu is the composition with GELU moved into the product's blocks: in float32 (where the
// SIMD path of each value matters) it must give the very same bits, on one thread and on two.
TEST_CASE("fused linear_gelu equals gelu(linear(x, W, b)) bit for bit, gradients included, on 1 and 2 threads") {
  struct Case {
    int64_t rows, in, out;
  };
  // one block; row blocks; column blocks; rows * out not a multiple of the SIMD width; the panel
  // backward (512 rows or more) in 2 and in 4 chunks, out not a multiple of the SIMD width; a weight
  // whose forward runs in blocks of 64 rows
  for (Case c : {Case{5, 7, 9}, Case{256, 64, 96}, Case{40, 64, 512}, Case{333, 64, 67}, Case{600, 24, 67},
                 Case{4200, 16, 24}, Case{600, 128, 300}})
    for (GeluApprox approx : {GeluApprox::none, GeluApprox::tanh})
      for (int threads : {1, 2}) {
        set_num_threads(threads);
        Generator gen(60);
        Tensor x0 = Tensor::randn({c.rows, c.in}, gen, 1.5), w0 = Tensor::randn({c.out, c.in}, gen, 0.2);
        Tensor b0 = Tensor::randn({c.out}, gen, 1.0), dy = Tensor::randn({c.rows, c.out}, gen, 1.0);
        std::vector<Tensor> fused{x0.clone().requires_grad_(), w0.clone().requires_grad_(),
                                  b0.clone().requires_grad_()};
        std::vector<Tensor> composed{x0.clone().requires_grad_(), w0.clone().requires_grad_(),
                                     b0.clone().requires_grad_()};
        Tensor ya = linear_gelu(fused[0], fused[1], fused[2], approx);
        Tensor yb = gelu(linear(composed[0], composed[1], composed[2]), approx);
        ya.backward(dy);
        yb.backward(dy);
        INFO("rows " << c.rows << " in " << c.in << " out " << c.out << " tanh " << (approx == GeluApprox::tanh)
                     << " threads " << threads);
        CHECK(ya.to_vector() == yb.to_vector());
        for (size_t i = 0; i < 3; ++i) CHECK(fused[i].grad().to_vector() == composed[i].grad().to_vector());
        // Without a graph (no slope kept: GELU in place over the product) the same bits again.
        NoGradGuard no_grad;
        Tensor yn = linear_gelu(x0, w0, b0, approx);
        CHECK_FALSE(yn.requires_grad());
        CHECK(yn.to_vector() == ya.to_vector());
      }
  set_num_threads(0);
}
