// The key numbers of the training-loop and mixed-precision lessons.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "lessons/mixed_precision.h"
#include "lessons/training.h"

using namespace sf::lessons;

TEST_CASE("lesson 13: schedules, clipping a spike, one AdamW step by hand") {
  std::ostringstream out;
  TrainingResult r = run_lesson_training(out);
  // Cosine with warmup 10, lr 1e-3, min 1e-4, decay 100, at steps 0 1 4 9 10 25 50 75 99 100 150.
  auto cosine = [](int s) {
    if (s < 10) return 1e-3 * (s + 1) / 11.0;
    double q = std::min(1.0, (s - 10) / 90.0);
    return 1e-4 + (1e-3 - 1e-4) * (1 + std::cos(M_PI * q)) / 2;
  };
  const int steps[] = {0, 1, 4, 9, 10, 25, 50, 75, 99, 100, 150};
  REQUIRE(r.cosine.size() == 11);
  for (size_t i = 0; i < 11; ++i) CHECK(r.cosine[i] == doctest::Approx(cosine(steps[i])).epsilon(1e-12));
  // Noam: 512^-0.5 * min(s^-0.5, s * 4000^-1.5), s = step + 1; peak at step 3999.
  const int nsteps[] = {0, 1000, 2000, 3999, 8000, 16000, 64000};
  REQUIRE(r.noam.size() == 7);
  for (size_t i = 0; i < 7; ++i) {
    double s = nsteps[i] + 1.0;
    CHECK(r.noam[i] ==
          doctest::Approx(std::pow(512, -0.5) * std::min(std::pow(s, -0.5), s * std::pow(4000, -1.5))).epsilon(1e-12));
  }
  REQUIRE(r.losses.size() == 40);
  CHECK(r.losses.back() < 0.5 * r.losses.front());  // it learned the sequence
  CHECK(r.spike_norm > 5 * r.norms.back());         // a real spike
  CHECK(r.clipped_norm == doctest::Approx(1.0).epsilon(1e-5));
  // AdamW at t = 1: p (1 - lr wd) - lr sign(g), and p (1 - lr wd) where g = 0.
  const std::vector<double> p0 = {1.0, -2.0, 0.5, 3.0}, g = {0.2, -0.1, 0.0, 4.0};
  REQUIRE(r.adamw_optimizer.size() == 4);
  for (size_t i = 0; i < 4; ++i) {
    double sign = g[i] > 0 ? 1 : g[i] < 0 ? -1 : 0;
    double expect =
        p0[i] * (1 - 0.1 * 0.01) - 0.1 * sign * (std::fabs(g[i]) > 0 ? std::fabs(g[i]) / (std::fabs(g[i]) + 1e-8) : 0);
    CHECK(r.adamw_by_hand[i] == doctest::Approx(expect).epsilon(1e-12));
    CHECK(std::fabs(r.adamw_optimizer[i] - r.adamw_by_hand[i]) < 1e-6);
  }
}

TEST_CASE("lesson 16: fp16/bf16 grids, underflow, loss scaling, a skipped step") {
  std::ostringstream out;
  MixedPrecisionResult r = run_lesson_mixed_precision(out);
  REQUIRE(r.fp16.size() == 3);
  CHECK(r.fp16[0] == 65504.0);
  CHECK(r.fp16[1] == std::ldexp(1.0, -24));
  CHECK(r.fp16[2] == std::ldexp(1.0, -10));
  REQUIRE(r.bf16.size() == 3);
  CHECK(r.bf16[0] == std::ldexp(255.0, 120));  // (2 - 2^-7) 2^127 = 3.3895e38
  CHECK(r.bf16[1] == std::ldexp(1.0, -133));
  CHECK(r.bf16[2] == std::ldexp(1.0, -7));
  // p significant bits leave a spacing of 2^-(p-1) at 1: p = log2(2 / spacing), and
  // p * log10(2) decimal digits: bf16 8 bits, 2.41 digits (not 3); fp16 11 bits, 3.31.
  CHECK(r.bf16_digits == doctest::Approx(std::log10(2.0 / r.bf16[2])));
  CHECK(r.fp16_digits == doctest::Approx(std::log10(2.0 / r.fp16[2])));
  CHECK(r.bf16_digits == doctest::Approx(2.408).epsilon(1e-3));
  CHECK(std::isinf(r.fp16_65520));
  CHECK(r.fp16_1e8 == 0.0);
  CHECK(r.grad_fp32 == doctest::Approx(2e-8).epsilon(1e-5));
  CHECK(r.grad_fp16 == 0.0);
  CHECK(r.zero_fraction_fp16 == 1.0);
  CHECK(r.zero_fraction_scaled == 0.0);
  CHECK(std::fabs(r.grad_scaled - r.grad_fp32) / r.grad_fp32 < 1e-3);  // fp16 relative precision
  REQUIRE(r.scales.size() == 3);
  CHECK(r.scales == std::vector<double>{65536, 32768, 16384});
  CHECK(r.stepped == std::vector<bool>{false, false, true});
  CHECK(r.steps_taken == 1);
  CHECK(r.weights[0] == 0.5);
  CHECK(r.weights[1] == 0.5);
  CHECK(r.final_w == doctest::Approx(0.5 - 0.1 * 2.0).epsilon(1e-6));  // SGD: w - lr * dW, dW = 2
}
