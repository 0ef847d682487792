// The key numbers of the lessons that need only the autograd engine.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "autograd/tensor.h"
#include "lessons/attention.h"
#include "lessons/autograd.h"
#include "lessons/broadcasting.h"
#include "lessons/embeddings.h"
#include "lessons/feedforward.h"
#include "lessons/layernorm.h"

using namespace sf::lessons;
using doctest::Approx;

static void check_close(const std::vector<double>& got, const std::vector<double>& want, double eps) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(got[i] - want[i]) <= eps);
  }
}

TEST_CASE("lesson 2: the chain rule, the engine and finite differences agree") {
  std::ostringstream out;
  AutogradResult r = run_lesson_autograd(out);
  const double a = 2, b = -1, c = 0.5, w = std::tanh(a * b + c), dw = 1 - w * w;
  CHECK(r.loss == Approx(a * w).epsilon(1e-12));
  check_close(r.by_hand, {w + a * b * dw, a * a * dw, a * dw}, 1e-12);
  check_close(r.by_engine, r.by_hand, 1e-12);
  check_close(r.by_finite_difference, r.by_hand, 1e-8);
  CHECK(r.dot.find("digraph") == 0);
  CHECK(r.dot.find("label=\"tanh\"") != std::string::npos);
  CHECK(r.dot.find("w = tanh(v)") != std::string::npos);
}

TEST_CASE("lesson 3: broadcast backward reduces, gradcheck catches a wrong backward") {
  std::ostringstream out;
  BroadcastingResult r = run_lesson_broadcasting(out);
  CHECK(r.broadcast_shape == std::vector<int64_t>{2, 3});
  check_close(r.bias_grad, {1.1, 2.2, 3.3}, 1e-12);
  CHECK(r.col_grad_shape == std::vector<int64_t>{4, 1});
  CHECK(r.row_grad_shape == std::vector<int64_t>{3});
  CHECK(r.unreduced_error.find("gradient of shape (2, 3)") != std::string::npos);
  CHECK(r.gradcheck_correct_ok);
  CHECK(!r.gradcheck_buggy_ok);
  CHECK(r.gradcheck_entries == 6 * 6 + 6 * 3);  // out (2,3) x (x: 6 entries + bias: 3)
  CHECK(r.buggy_analytic == 0.0);
  CHECK(r.buggy_numeric == Approx(1.0).epsilon(1e-6));
}

TEST_CASE("lesson 4: lookup equals one-hot matmul, gradient is a scatter-add") {
  std::ostringstream out;
  EmbeddingsResult r = run_lesson_embeddings(out);
  CHECK(r.lookup_vs_onehot == 0.0);
  CHECK(r.grad_lookup_vs_onehot == 0.0);
  check_close(r.grad_row_wo, {1.5, 0.5, 0.5, 0.5}, 1e-15);
  check_close(r.grad_row_unused, {0, 0, 0, 0}, 0);
  CHECK(r.lookup_reads == 1024 * 768);
  CHECK(r.onehot_mults == int64_t{1024} * 50257 * 768);
}

// Lesson 5's step 2: q.k has variance d_k when the entries are independent with mean 0 and
// variance 1; with mean 1 (still variance 1) each term q_i k_i has variance 3, and the sum 3 d_k.
TEST_CASE("lesson 5: the dot product's variance is d_k for independent zero-mean unit-variance entries") {
  const int d_k = 64, pairs = 20000;
  auto dot_variance = [&](double mean) {
    sf::Generator gen(5);
    double sum = 0, sum_sq = 0;
    for (int n = 0; n < pairs; ++n) {
      double dot = 0;
      for (int i = 0; i < d_k; ++i) dot += (mean + gen.normal()) * (mean + gen.normal());
      sum += dot;
      sum_sq += dot * dot;
    }
    return sum_sq / pairs - (sum / pairs) * (sum / pairs);
  };
  CHECK(dot_variance(0.0) == doctest::Approx(d_k).epsilon(0.05));
  CHECK(dot_variance(1.0) == doctest::Approx(3.0 * d_k).epsilon(0.05));
}

TEST_CASE("lesson 5: the worked example 我 / 喜欢 / 苹果") {
  std::ostringstream out;
  AttentionResult r = run_lesson_attention(out);
  check_close(r.scores, {0.36, 0.81, 1.01}, 1e-12);
  check_close(r.scaled, {0.18, 0.405, 0.505}, 1e-12);
  // The weights recomputed independently from the scaled scores.
  double z = std::exp(0.18) + std::exp(0.405) + std::exp(0.505);
  check_close(r.weights, {std::exp(0.18) / z, std::exp(0.405) / z, std::exp(0.505) / z}, 1e-12);
  check_close(r.weights, {0.275, 0.344, 0.381}, 1e-3);
  check_close(r.output, {0.334, 0.483, 0.577, 0.321}, 1e-3);
  check_close(r.output_rounded_weights, {0.3338, 0.4826, 0.5768, 0.3206}, 1e-12);
  for (size_t i = 0; i < 4; ++i) CHECK(std::fabs(r.output[i] - r.output_rounded_weights[i]) < 2e-4);
  // Causal: the first row sees only itself, the last row is the example's weights again.
  REQUIRE(r.causal_weights.size() == 9);
  check_close({r.causal_weights[0], r.causal_weights[1], r.causal_weights[2]}, {1, 0, 0}, 0);
  CHECK(r.causal_weights[5] == 0.0);
  check_close({r.causal_weights[6], r.causal_weights[7], r.causal_weights[8]}, r.weights, 1e-12);
  check_close(r.fused_output, r.hand_output, 1e-12);
  // Padding: the pad column gets no weight, and every row still sums to 1.
  REQUIRE(r.padding_weights.size() == 16);
  for (int t = 0; t < 4; ++t) {
    CHECK(r.padding_weights[static_cast<size_t>(t * 4 + 3)] == 0.0);
    double s = 0;
    for (int k = 0; k < 4; ++k) s += r.padding_weights[static_cast<size_t>(t * 4 + k)];
    CHECK(s == Approx(1.0).epsilon(1e-12));
  }
  check_close(r.all_masked_row, {0, 0, 0}, 0);
  // The whole sentence (the Q/K/V picture's matrices): causal, every row a distribution.
  REQUIRE(r.sentence_weights.size() == 25);
  for (int t = 0; t < 5; ++t) {
    double s = 0;
    for (int k = 0; k < 5; ++k) {
      double w = r.sentence_weights[static_cast<size_t>(t * 5 + k)];
      if (k > t) CHECK(w == 0.0);
      else CHECK(w > 0.0);
      s += w;
    }
    CHECK(s == Approx(1.0).epsilon(1e-6));
  }
}

TEST_CASE("lesson 9: LayerNorm statistics, scale invariance and gradient") {
  std::ostringstream out;
  LayerNormResult r = run_lesson_layernorm(out);
  check_close(r.means, {2.5, 10.0, 0.005}, 1e-12);
  check_close(r.stds, {std::sqrt(1.25), std::sqrt(537.5), std::sqrt(0.000325)}, 1e-12);
  check_close(r.out_means, {0, 0, 0}, 1e-12);
  // std after LN = sqrt(var / (var + eps)).
  check_close(
      r.out_stds,
      {std::sqrt(1.25 / (1.25 + 1e-5)), std::sqrt(537.5 / (537.5 + 1e-5)), std::sqrt(0.000325 / (0.000325 + 1e-5))},
      1e-9);
  CHECK(r.scale_invariance > 1e-3);  // eps matters for the quiet token...
  CHECK(r.scale_invariance < 0.05);  // ...but only a little
  CHECK(r.fused_vs_composed < 1e-12);
  CHECK(r.grad_row_sum < 1e-12);
  CHECK(r.grad_dot_xhat < 1e-4);
}

TEST_CASE("lesson 10: GELU against ReLU, FFN shapes and parameter count") {
  std::ostringstream out;
  FeedForwardResult r = run_lesson_feedforward(out);
  REQUIRE(r.xs.size() == 9);
  for (size_t i = 0; i < r.xs.size(); ++i) {
    double x = r.xs[i], phi = 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
    CHECK(r.relu[i] == std::max(x, 0.0));
    CHECK(r.gelu[i] == Approx(x * phi).epsilon(1e-12));
    double pdf = std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
    CHECK(r.dgelu[i] == Approx(phi + x * pdf).epsilon(1e-10));
    CHECK(r.drelu[i] == (x > 0 ? 1.0 : 0.0));
  }
  CHECK(r.tanh_approx_max_error > 1e-4);
  CHECK(r.tanh_approx_max_error < 1e-3);
  CHECK(r.dead_relu_fraction > 0.3);
  CHECK(r.dead_relu_fraction < 0.7);
  CHECK(r.zero_gelu_grad_fraction == 0.0);
  CHECK(r.params_768 == 4722432);
  CHECK(r.shapes == std::vector<int64_t>{3, 4, 3, 16, 3, 4});
}
