// The lessons on what attention costs (attention-cost, scaling, online-softmax, windows, kv-cache,
// extrapolation, heads): their key numbers against independent computations.
// The lessons that measure time or train run here on reduced options; their texts are checked by
// test_docs.cpp (texts only for the slow ones) and in full by `lesson_docs --check`.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "lessons/lesson.h"
#include "lessons/attention_cost.h"
#include "lessons/extrapolation.h"
#include "lessons/heads.h"
#include "lessons/kv_cache.h"
#include "lessons/online_softmax.h"
#include "lessons/scaling.h"
#include "lessons/windows.h"
#include "tests/sanitized.h"

using namespace sf::lessons;

using sf::test::kSanitized;  // tests/sanitized.h: a reduced budget under the sanitizers

TEST_CASE("lesson 20: the articles' entry counts, the crossings, and P's size as the kernel keeps it") {
  AttentionCostOptions o;
  o.lengths = kSanitized ? std::vector<int64_t>{64, 128} : std::vector<int64_t>{64, 128, 256, 512};
  o.max_repeats = 1;
  std::ostringstream out;
  AttentionCostResult r = run_lesson_attention_cost(out, o);
  CHECK(r.entries_2048 == 4194304);      // ~4.2 million
  CHECK(r.entries_32768 == 1073741824);  // ~1.07 billion
  CHECK(r.gpt2_probabilities_bytes_2048 == 144.0 * 4194304 * 4);
  CHECK(r.count_crossover == 1535);  // T + 1 = 12 * 128
  REQUIRE(r.p_bytes.size() == o.lengths.size());
  for (size_t i = 0; i < o.lengths.size(); ++i) {
    const double T = static_cast<double>(o.lengths[i]);
    CAPTURE(T);
    CHECK(r.p_bytes[i] == 4.0 * 4 * T * T);         // H T^2 float32 probabilities
    CHECK(r.linear_bytes[i] == 4.0 * 7 * T * 128);  // 7 T C float32 inputs
    CHECK(r.count_ratio[i] == doctest::Approx((T + 1) / (12.0 * 128)));
    CHECK(r.attention_ms[i] > 0);
    CHECK(r.linear_ms[i] > 0);
  }
  CHECK(out.str().find("picture: images/attention_cost_time.png") != std::string::npos);
  // Step 5: the recomputed GPT (4 layers) keeps its sublayers' inputs, two (1, 1024, C) float
  // tensors a block.
  const double half_inputs = 4 * 2 * 1024.0 * static_cast<double>(o.n_embd) * 4;
  CHECK(r.saved_bytes_recompute > half_inputs);
  CHECK(r.saved_bytes_recompute < 2 * half_inputs);  // and little else: the LM head's few
  CHECK(r.saved_bytes > 10 * r.saved_bytes_recompute);
  CHECK(r.recompute_extra_work > 0.3);
  CHECK(r.recompute_extra_work < 1.0 / 3);  // one forward of the blocks, not of the LM head
}

TEST_CASE("lesson 6: without 1/sqrt(d_k) the softmax saturates, with it nothing depends on d_k") {
  std::ostringstream out;
  ScalingResult r = run_lesson_scaling(out);
  REQUIRE(r.d_k.size() == 9);
  CHECK(r.d_k.front() == 4);
  CHECK(r.d_k.back() == 1024);
  CHECK(r.uniform_entropy == doctest::Approx(std::log(64.0)));
  for (size_t i = 0; i < r.d_k.size(); ++i) {
    CAPTURE(r.d_k[i]);
    const double sd = std::sqrt(static_cast<double>(r.d_k[i]));
    CHECK(r.score_std[i] == doctest::Approx(sd).epsilon(0.2));  // 256 x 64 scores: a rough estimate
    CHECK(r.scaled_score_std[i] == doctest::Approx(1.0).epsilon(0.2));
    CHECK(r.scaled_max_weight[i] < 0.2);  // a uniform row of 64 has 0.016
    CHECK(r.scaled_entropy[i] > 3.4);     // ln 64 = 4.16
    CHECK(r.scaled_saturated[i] == 0);
    if (r.d_k[i] >= 16) CHECK(r.scaled_max_weight[i] < r.max_weight[i]);
  }
  const size_t at256 = 6, last = 8;
  REQUIRE(r.d_k[at256] == 256);
  CHECK(r.scaled_max_weight[at256] < r.max_weight[at256]);
  CHECK(r.max_weight[last] > 0.9);
  CHECK(r.entropy[last] < 0.3);
  CHECK(r.saturated[last] > 0.5);
  CHECK(r.grad_norm[last] < 0.5 * r.scaled_grad_norm[last]);
  // the unscaled quantities move monotonically with d_k (up to the sampling noise of 256 rows)
  CHECK(r.max_weight[last] > r.max_weight[0] + 0.5);
  CHECK(r.entropy[last] < r.entropy[0] - 2.0);
  CHECK(r.saturated_jacobian_max < 0.01);  // softmax([8, 1, 0, -1]) is nearly one-hot
}

TEST_CASE(
    "lesson 21: the online softmax gives softmax's weights and output and the tiled attention gives sf::attention's") {
  std::ostringstream out;
  OnlineSoftmaxResult r = run_lesson_online_softmax(out);
  CHECK(r.running_max == std::vector<double>{3.0, 5.0, 6.0});
  // l after the last tile is sum e^(s - 6) over the row, by hand
  double l = 0;
  for (double s : {1.0, 3.0, 0.5, 2.0, 5.0, 1.5, 4.0, 0.0, 2.5, 6.0}) l += std::exp(s - 6.0);
  REQUIRE(r.running_sum.size() == 3);
  CHECK(r.running_sum.back() == doctest::Approx(l).epsilon(1e-12));
  CHECK(r.weight_diff < 1e-15);
  CHECK(r.output_diff < 1e-12);
  CHECK(r.tiled_diff < 1e-12);
  CHECK(r.engine_tiled_diff < 1e-12);  // output and q/k/v gradients, float64
  CHECK(r.stored_entries == 256 * 256);
  CHECK(r.matrix_bytes.back() == 4.0 * 32768 * 32768);
  CHECK(r.row_stat_bytes.back() == 8.0 * 32768);
}

TEST_CASE("lesson 23: the cache formula counts what GPTCache holds, and the cache changes speed, not tokens") {
  KvCacheOptions o;
  o.new_tokens = kSanitized ? 4 : 40;
  std::ostringstream out;
  KvCacheResult r = run_lesson_kv_cache(out, o);
  CHECK(r.engine_bytes_per_token == r.formula_bytes_per_token);
  CHECK(r.formula_bytes_per_token == 2.0 * 4 * 4 * 32 * 4);
  REQUIRE(r.per_token_fp16.size() == 6);
  CHECK(r.per_token_fp16[0] == 2.0 * 12 * 12 * 64 * 2);  // GPT-2 small: 36 KiB per token
  CHECK(r.context_fp16[0] == 2.0 * 12 * 12 * 64 * 2 * 1024);
  CHECK(r.context_fp16[3] == 2.0 * 1024 * 1024 * 1024);  // 7B, standard: 2 GiB per 4096 tokens
  CHECK(r.context_fp16[4] == r.context_fp16[3] / 4);     // 8 of 32 K/V heads
  CHECK(r.context_fp16[5] == r.context_fp16[3] / 32);    // one K/V head
  CHECK(r.same_tokens);
  CHECK(r.cached_tokens_per_s > 0);
  CHECK(r.uncached_tokens_per_s > 0);
}

// The three lessons that train: a few steps each, for the code paths and what holds at any budget.
SmallTraining tiny_training() {
  SmallTraining t;
  t.steps = kSanitized ? 3 : 30;
  t.batch_size = 8;
  return t;
}

TEST_CASE("lesson 22 on a tiny budget: keys per query as counted, val losses finite") {
  WindowsOptions o;
  o.training = tiny_training();
  o.val_windows = 8;
  o.timed_length = 128;
  std::ostringstream out;
  WindowsResult r = run_lesson_windows(out, o);
  REQUIRE(r.keys_per_query.size() == 4);
  CHECK(r.keys_per_query[0] == doctest::Approx((1 + 2 + 3 + 4.0 * 61) / 64));  // window 4 over T = 64
  CHECK(r.keys_per_query[3] == doctest::Approx(65.0 / 2));                     // full: (T + 1) / 2
  CHECK(r.keys_per_query_long[3] == doctest::Approx(129.0 / 2));
  for (size_t i = 0; i < 4; ++i) {
    CHECK(std::isfinite(r.val_loss[i]));
    CHECK(r.val_loss[i] < std::log(65.0) + 0.2);
    CHECK(r.attention_ms[i] > 0);
  }
}

TEST_CASE("lesson 24 on a tiny budget: learned positions throw past block_size, the others score every position") {
  ExtrapolationOptions o;
  o.training = tiny_training();
  o.eval_windows = 2;
  std::ostringstream out;
  ExtrapolationResult r = run_lesson_extrapolation(out, o);
  CHECK(r.learned_error.find("exceeds block_size 64") != std::string::npos);
  REQUIRE(r.per_position.size() == 4);
  CHECK(r.names == std::vector<std::string>{"learned", "sinusoidal", "rope", "alibi"});
  for (const auto& p : r.per_position) {
    REQUIRE(p.size() == 256);
    for (double x : p) CHECK(std::isfinite(x));
  }
}

TEST_CASE("lesson 19 on a tiny budget: one parameter count for every head count, a score row per head and seed") {
  HeadsOptions o;
  o.training = tiny_training();
  o.val_windows = 8;
  o.role_windows = 2;
  o.induction_sequences = 2;
  std::ostringstream out;
  HeadsResult r = run_lesson_heads(out, o);
  REQUIRE(r.params.size() == 4);
  for (int64_t p : r.params) CHECK(p == r.params[0]);
  for (size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    REQUIRE(r.scores[i].size() == 2);  // two seeds
    REQUIRE(r.val_loss[i].size() == 2);
    CHECK(r.val_loss[i][0] != r.val_loss[i][1]);  // two seeds, two trainings
    for (const auto& scores : r.scores[i]) {
      REQUIRE(scores.size() == static_cast<size_t>(2 * o.heads[i]));
      for (const auto& h : scores) {
        CHECK(h.prev >= 0);
        CHECK(h.prev <= 1 + 1e-9);
        CHECK(h.induction >= 0);
        CHECK(h.induction <= 1 + 1e-9);
        CHECK(h.word_start <= 1 + 1e-9);
      }
    }
    for (double v : r.val_loss[i]) CHECK(std::isfinite(v));
  }
  CHECK(r.prompt_length == static_cast<int64_t>(o.prompt.size()));
}
