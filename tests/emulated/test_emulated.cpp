// test_emulated.cpp: the checks a build for another CPU (ARM64) runs under emulation (see
// CMakeLists.txt): every op's and every module's float64 gradient check, and a small GPT
// trained from a config that must learn, stop, and resume to the same losses.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <string>

#include "autograd/gradcheck.h"
#include "data/markov_corpus.h"
#include "nn/gradcheck_modules.h"
#include "train/config.h"
#include "train/train.h"

using namespace sf;

static void run_all(const std::vector<GradcheckCase>& cases) {
  REQUIRE(!cases.empty());
  for (const GradcheckCase& c : cases) {
    GradcheckResult r = c.run();
    INFO(c.group << " / " << c.name << ": " << r.describe());
    CHECK(r.checked > 0);
    CHECK(r.ok);
  }
}

TEST_CASE("float64 gradient check of every op") { run_all(op_gradcheck_cases()); }
TEST_CASE("float64 gradient check of every module and model") { run_all(module_gradcheck_cases()); }

// A small GPT on the built-in order-2 Markov corpus (27 symbols): two layers, two threads, 100
// steps, no full-split evaluation.
static Config small_config(const std::string& run_name) {
  Config c;
  c.data.dataset = Dataset::synthetic;
  c.data.corpus_tokens = 20000;
  c.data.corpus_val_tokens = 2000;
  c.model.n_layer = 2;
  c.model.n_head = 2;
  c.model.n_embd = 32;
  c.model.block_size = 32;
  c.train.steps = 100;
  c.train.batch_size = 8;
  c.train.eval_interval = 30;
  c.train.eval_iters = 4;
  c.train.samples = 0;
  c.train.threads = 2;
  c.optim.lr = 1e-2;
  c.schedule.warmup_steps = 5;
  c.schedule.min_lr = 1e-3;
  c.output.run_dir = (std::filesystem::temp_directory_path() / "sf_test_emulated" / run_name).string();
  c.output.overwrite = true;
  c.output.plot = false;
  validate_config(c);
  return c;
}

static TrainResult quiet_train(const Config& c, TrainOptions o = {}) {
  std::ostringstream log;
  o.out = &log;
  return train(c, o);
}

static double mean_of_last(const std::vector<double>& v, size_t n) {
  return std::accumulate(v.end() - static_cast<std::ptrdiff_t>(n), v.end(), 0.0) / static_cast<double>(n);
}

TEST_CASE("a small GPT learns, stops at a step and resumes to the same losses") {
  const Config c = small_config("learns");
  const TrainResult full = quiet_train(c);
  REQUIRE(full.losses.size() == 100);
  // At the start the model guesses about uniformly over the 27 symbols: ln 27 = 3.30.
  CHECK(full.losses.front() == doctest::Approx(std::log(27.0)).epsilon(0.05));
  data::MarkovConfig source_config;
  source_config.seed = static_cast<uint64_t>(c.data.corpus_seed);
  source_config.order = c.data.corpus_order;
  const data::MarkovSource source(source_config);
  const double unigram = source.entropy_given(0), bigram = source.entropy_given(1);
  MESSAGE("loss " << full.losses.front() << " -> " << mean_of_last(full.losses, 10)
                  << " (mean of the last 10 steps), val " << full.val_loss << "; the best loss without context "
                  << unigram << ", with one symbol of context " << bigram << ", the entropy rate "
                  << source.entropy_rate());
  // Learned to use its context: no model that ignores it can beat the unigram entropy (3.15 nats
  // for this source) in expectation. The val estimate (4 batches of 8 x 32 tokens) and the last 10
  // steps' mean must be 0.15 nats below it; the x86-64 and ARM64 builds both reach 2.88 and 2.85.
  CHECK(full.val_loss < unigram - 0.15);
  CHECK(mean_of_last(full.losses, 10) < unigram - 0.15);
  // Stopped after step 25 (a checkpoint, as Ctrl-C leaves one) and resumed: the same losses.
  TrainOptions stop;
  stop.stop_after = 25;
  const TrainResult first = quiet_train(c, stop);
  TrainOptions resume;
  resume.resume = true;
  const TrainResult rest = quiet_train(c, resume);
  std::vector<double> joined = first.losses;
  joined.insert(joined.end(), rest.losses.begin(), rest.losses.end());
  CHECK(joined == full.losses);
}
