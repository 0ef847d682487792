// Lessons 14 and 18 train models: their full runs take minutes, so here they run on reduced
// budgets and the tests assert only what holds robustly there. Their texts' output blocks are
// checked against the full runs by `lesson_docs --check` (see docs/lesson-texts.md).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "autograd/errors.h"
#include "autograd/cpu/threads.h"

#include "train/head_scores.h"
#include "lessons/common/stage_model.h"
#include "lessons/lesson.h"
#include "lessons/build_gpt.h"
#include "lessons/inside.h"
#include "tests/sanitized.h"

using namespace sf::lessons;

using sf::test::kSanitized;  // tests/sanitized.h: a reduced budget under the sanitizers

TEST_CASE("lesson 14: each stage's parameter count equals its formula and sf::GPT's") {
  for (int s = 0; s < kStages; ++s) {
    StageConfig c;
    c.stage = static_cast<Stage>(s);
    c.vocab_size = 65;
    CAPTURE(s);
    CHECK(StageModel(c).num_parameters() == stage_parameter_formula(c));
  }
  StageConfig c;  // by hand for the default sizes: V 65, T 32, C 64, N 4
  c.vocab_size = 65;
  c.stage = Stage::bigram;
  CHECK(stage_parameter_formula(c) == 4225);
  c.stage = Stage::heads;
  CHECK(stage_parameter_formula(c) == 65 * 64 * 2 + 32 * 64 + 4 * 64 * 64);
  c.stage = Stage::residual;  // the feed-forward stage's weights, added instead of replacing: no new ones
  CHECK(stage_parameter_formula(c) == 65 * 64 * 2 + 32 * 64 + 12 * 64 * 64);
  c.stage = Stage::layernorm;  // + three LayerNorm gains
  CHECK(stage_parameter_formula(c) == 65 * 64 * 2 + 32 * 64 + 12 * 64 * 64 + 3 * 64);
  c.stage = Stage::blocks;
  CHECK(stage_parameter_formula(c) == 65 * 64 * 2 + 32 * 64 + 4 * (12 * 64 * 64 + 2 * 64) + 64);
}

TEST_CASE("lesson 14 on a reduced budget: the full model beats the bigram table") {
  BuildGptOptions o;
  o.steps = kSanitized ? 4 : 120;
  o.n_layer = 2;
  o.depth_factor = kSanitized ? 1 : 2;
  o.val_batches = 8;  // 16384 val characters
  o.sample_chars = kSanitized ? 10 : 60;
  std::ostringstream out;
  BuildGptResult r = run_lesson_build_gpt(out, o);
  REQUIRE(r.val_loss.size() == static_cast<size_t>(kStages));
  CHECK(r.params == r.formula);
  CHECK(r.gpt_params == r.params.back());
  for (size_t s = 0; s < static_cast<size_t>(kStages); ++s) {
    CAPTURE(s);
    CHECK(r.samples[s].size() >= static_cast<size_t>(o.sample_chars));  // ASCII text: a byte a character
    REQUIRE(r.val_loss_per_seed[s].size() == 2);
    CHECK(r.val_loss[s] == doctest::Approx((r.val_loss_per_seed[s][0] + r.val_loss_per_seed[s][1]) / 2));
    CHECK(r.val_loss_per_seed[s][0] != r.val_loss_per_seed[s][1]);  // two seeds, two trainings
    CHECK(std::isfinite(r.val_loss[s]));
    CHECK(r.val_loss[s] < std::log(65.0) + 0.05);          // no worse than knowing nothing
    CHECK(r.curves[s].size() == (kSanitized ? 4u : 30u));  // 120 steps in bins of 4 (4 steps: bins of 1)
  }
  REQUIRE(r.depth_val_loss.size() == 2);
  CHECK(r.depth_layers == std::vector<int64_t>{1, 2});
  CHECK(r.depth_params[0] == r.params[5]);  // the one-block stage and the N-block stage
  CHECK(r.depth_params[1] == r.params[6]);
  if (!kSanitized) {
    // 120 steps: the table is still far from the bigram statistics (about 2.5), the blocks are not
    CHECK(r.val_loss.back() < r.val_loss.front() - 0.1);
    CHECK(r.val_loss[5] < r.val_loss.front());
    // the residual stage keeps each character's vector: better than the same layers without it
    CHECK(r.val_loss[4] < r.val_loss[3]);
    // twice the steps: lower than the same model on the stage budget
    CHECK(r.depth_val_loss[1] < r.val_loss[6]);
  }
  std::string text = out.str();
  for (int step = 1; step <= 10; ++step) CHECK(text.find("\n== " + std::to_string(step) + ". ") != std::string::npos);
}

TEST_CASE("lesson 14's numbers do not depend on the number of threads") {
  BuildGptOptions o;
  o.steps = kSanitized ? 2 : 12;
  o.n_layer = 1;
  o.depth_factor = 0;
  o.val_batches = 2;
  o.sample_chars = 20;
  BuildGptOptions o2 = o;
  o2.sample_chars = 21;  // other options, so it trains again (results are memoised per options)
  const int before = sf::num_threads();
  std::ostringstream a, b;
  sf::set_num_threads(1);
  BuildGptResult one = run_lesson_build_gpt(a, o);
  sf::set_num_threads(2);
  BuildGptResult two = run_lesson_build_gpt(b, o2);
  sf::set_num_threads(before);
  for (size_t s = 0; s < static_cast<size_t>(kStages); ++s) {
    CAPTURE(s);
    CHECK(one.val_loss[s] == two.val_loss[s]);              // bit for bit
    CHECK(two.samples[s].substr(0, 20) == one.samples[s]);  // the same draws
  }
}

TEST_CASE(
    "lesson 18 on a reduced budget: scores per head and seed, and the reverse model looks at the mirrored position") {
  // Under the sanitizers 4 steps of each model and one batch per loss estimate: the same training,
  // inspection and lesson code (ASan and UBSan check it, not the learning, which the 200 reverse
  // steps below are for), in a minute instead of several (158 s under ASan with the configs' 20
  // and 10 estimate batches, twice per run).
  InsideOptions o;
  o.gpt_steps = kSanitized ? 4 : 30;
  o.reverse_steps = kSanitized ? 4 : 200;
  o.role_windows = 2;
  o.induction_sequences = 2;
  o.full_val = false;
  o.eval_iters = kSanitized ? 1 : 0;  // 0: each config's own
  std::ostringstream out;
  InsideResult r = run_lesson_inside(out, o);
  REQUIRE(r.scores.size() == 2);  // two seeds
  for (const auto& scores : r.scores) {
    REQUIRE(scores.size() == 16);  // configs/default.json: 4 layers x 4 heads
    for (const HeadScore& h : scores) {
      CHECK(h.prev >= 0);
      CHECK(h.prev <= 1 + 1e-6);
      CHECK(h.induction >= 0);
      CHECK(h.induction <= 1 + 1e-6);
      CHECK(h.word_start <= 1 + 1e-6);
    }
  }
  CHECK(r.scores[0][0].prev != r.scores[1][0].prev);  // two seeds, two models
  CHECK(r.even.prev == doctest::Approx(sf::previous_token_baseline(64)));
  CHECK(r.even.induction == doctest::Approx(sf::induction_baseline(32)));
  REQUIRE(r.gpt_val_loss.size() == 2);
  for (double loss : r.gpt_val_loss) CHECK(loss < std::log(65.0) + 0.05);
  CHECK(r.induction_maps.length() == 64);
  CHECK(r.prompt_maps.layers() == 4);
  REQUIRE(r.cross.aligned_share.size() == 2);  // configs/reverse.json: 2 decoder layers
  CHECK(r.cross.alignment == "mirrored");
  MESSAGE("reverse, " << o.reverse_steps << " steps: mirrored share " << r.cross.aligned_share[0] << ", "
                      << r.cross.aligned_share[1]);
  if (!kSanitized) {
    // Even attention over a source of s tokens puts 1/s there: about 0.2 over the output tokens
    // of lengths 2..8. After 200 steps one of the two layers is well above it (measured here:
    // 0.32 and 0.42; the lesson's 600 steps give more).
    CHECK(std::max(r.cross.aligned_share[0], r.cross.aligned_share[1]) > 0.3);
  }
  CHECK(out.str().find("\n== 5. ") != std::string::npos);
}

TEST_CASE("lesson 14 runs on the Tang poems too (SF_LESSON_CORPUS=tang)") {
  StageData d;
  try {
    d = load_stage_data("tang");
  } catch (const sf::Error& e) {
    MESSAGE("skipped: " << e.what());
    return;
  }
  CHECK(d.tokenizer->vocab_size() > 1000);  // thousands of characters: a large bigram table
  BuildGptOptions o;
  o.corpus = "tang";
  o.steps = kSanitized ? 2 : 10;
  o.n_layer = 1;
  o.depth_factor = 0;
  o.seeds = {1337};
  o.sample_chars = 10;
  o.val_batches = 1;
  std::ostringstream out;
  BuildGptResult r = run_lesson_build_gpt(out, o);
  CHECK(r.params == r.formula);
  CHECK(r.params[0] == static_cast<int64_t>(d.tokenizer->vocab_size()) * d.tokenizer->vocab_size());
  CHECK(out.str().find("images/build_gpt_stages_tang.png") != std::string::npos);
  CHECK_THROWS_WITH_AS(load_stage_data("klingon"), doctest::Contains("valid: shakespeare, tang"), sf::Error);
}
