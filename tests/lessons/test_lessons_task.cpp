// The first lesson, the task: the sampler's distribution as the lesson computes it, and the
// lesson's key numbers (the untrained loss ln V, the bigram table trained, the knobs' effects,
// overfitting on a slice) against their formulas and against each other.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "lessons/docs.h"
#include "lessons/lesson.h"
#include "lessons/task.h"
#include "tests/sanitized.h"

using namespace sf::lessons;
using sf::test::kSanitized;  // tests/sanitized.h: a reduced budget under the sanitizers

TEST_CASE("lesson task: sampling_distribution is what sample_from_logits draws from") {
  const std::vector<float> logits = {2.0f, 1.5f, 1.5f, 0.0f, -1.0f, -3.0f, 0.7f, 0.2f};
  const int64_t V = static_cast<int64_t>(logits.size());
  const sf::SampleOptions settings[] = {{1, 0.0, 0, 1.0}, {1, 0.5, 0, 1.0}, {1, 1.0, 0, 1.0}, {1, 2.0, 0, 1.0},
                                        {1, 1.0, 3, 1.0}, {1, 1.0, 0, 0.5}, {1, 1.0, 0, 0.9}, {1, 0.7, 4, 0.8}};
  const int draws = kSanitized ? 4000 : 40000;
  for (const sf::SampleOptions& o : settings) {
    CAPTURE(o.temperature);
    CAPTURE(o.top_k);
    CAPTURE(o.top_p);
    std::vector<double> p = sampling_distribution(logits, o);
    double total = 0;
    for (double x : p) total += x;
    CHECK(total == doctest::Approx(1.0).epsilon(1e-12));
    std::vector<int> counts(static_cast<size_t>(V), 0);
    sf::Generator gen(11);
    for (int i = 0; i < draws; ++i) ++counts[static_cast<size_t>(sf::sample_from_logits(logits.data(), V, o, gen))];
    for (size_t v = 0; v < p.size(); ++v) {
      CAPTURE(v);
      const double freq = counts[v] / static_cast<double>(draws);
      if (p[v] == 0) CHECK(counts[v] == 0);  // what the distribution cuts, the sampler never draws
      else CHECK(std::fabs(freq - p[v]) < 5 * std::sqrt(p[v] * (1 - p[v]) / draws) + 1e-12);
    }
  }
  // The knobs by their definitions: temperature 1 is softmax; top-k 3 keeps 3; greedy keeps 1.
  std::vector<double> soft = sampling_distribution(logits, {1, 1.0, 0, 1.0});
  double z = 0;
  for (float l : logits) z += std::exp(static_cast<double>(l));
  CHECK(soft[0] == doctest::Approx(std::exp(2.0) / z).epsilon(1e-12));
  auto kept = [](const std::vector<double>& p) {
    return std::count_if(p.begin(), p.end(), [](double x) { return x > 0; });
  };
  CHECK(kept(sampling_distribution(logits, {1, 1.0, 3, 1.0})) == 3);
  CHECK(kept(sampling_distribution(logits, {1, 0.0, 0, 1.0})) == 1);
  CHECK(entropy_of(std::vector<double>(65, 1.0 / 65)) == doctest::Approx(std::log(65.0)).epsilon(1e-12));
}

// The lesson trains two bigram tables (a few seconds of CPU in Release); under the sanitizers it is
// skipped, and the case above still runs there.
TEST_CASE("lesson task: the untrained loss, the trained table, the knobs, overfitting, and both texts") {
  if (kSanitized) {
    MESSAGE("skipped: lesson task trains for a few seconds of CPU in Release; too slow under the sanitizers");
    return;
  }
  std::ostringstream out, progress;
  TaskResult r;
  {
    struct StderrTo {  // std::cerr into `progress` until the end of this block, even on a throw
      std::streambuf* old;
      ~StderrTo() { std::cerr.rdbuf(old); }
    } redirect{std::cerr.rdbuf(progress.rdbuf())};
    r = run_lesson_task(out);
  }
  CHECK(progress.str().find("step 1100/1100") != std::string::npos);
  CHECK(r.vocab_size == 65);
  CHECK(r.ln_vocab == std::log(65.0));
  // A fresh model is nearly uniform: its loss is ln V to within a few hundredths.
  CHECK(r.untrained_max_logit < 0.2);
  CHECK(std::fabs(r.untrained_bigram_val - r.ln_vocab) < 0.01);
  CHECK(std::fabs(r.untrained_gpt_val - r.ln_vocab) < 0.05);
  // Training reaches the counted table's val loss to within a few hundredths, train below val.
  REQUIRE(r.val_curve.size() == r.curve_steps.size());
  CHECK(r.val_curve.front() == doctest::Approx(r.untrained_bigram_val));
  CHECK(r.final_val > r.counts_val - 0.01);
  CHECK(r.final_val < r.counts_val + 0.05);
  CHECK(r.final_train < r.final_val);
  // The knobs, in the order the lesson lists them: greedy, T 0.5, 1, 2, top-k 3, top-p 0.5, 0.9.
  REQUIRE(r.samples.size() == 7);
  CHECK(r.samples[0].mean_entropy == 0);
  CHECK(r.samples[0].distinct <= 5);  // greedy loops
  CHECK(r.samples[1].mean_entropy < r.samples[2].mean_entropy);
  CHECK(r.samples[2].mean_entropy < r.samples[3].mean_entropy);
  CHECK(r.samples[1].distinct < r.samples[2].distinct);
  CHECK(r.samples[2].distinct < r.samples[3].distinct);
  CHECK(r.samples[4].mean_kept == 3);
  CHECK(r.samples[5].mean_kept < r.samples[6].mean_kept);
  CHECK(r.samples[4].distinct < r.samples[2].distinct);
  // Overfitting: the slice's loss ends far below val, and val ends well above its lowest point.
  CHECK(r.overfit_final_train < r.final_train);
  CHECK(r.overfit_best_step < r.overfit_steps.back());
  CHECK(r.overfit_final_val > r.overfit_best_val + 0.3);
  CHECK(r.overfit_final_val > r.overfit_final_train + 1.0);
  // Both texts against the run (the training runs once per process).
  const Lesson* lesson = find_lesson("task");
  REQUIRE(lesson != nullptr);
  CHECK(lesson->slow);
  for (const std::string& p : check_lesson_texts(SF_SOURCE_DIR, *lesson, SlowLessons::run)) FAIL_CHECK(p);
}
