// Gradient accumulation (train.grad_accum_steps): N micro-batches of b rows per optimizer step
// are one step on a batch of N*b rows, drawn in the same order.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "tiny_run.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/metrics.h"
#include "train/train.h"

using namespace sf;
using namespace sf::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

// The largest |a - b| / |b| over the steps.
static double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

// Tolerance: both runs see the same rows, but the gradient of a batch of N*b rows sums the rows
// inside one matmul (its own blocking order), while N micro-batches of b each sum their rows and
// then add the N float32 results: the same sum, in another order, so the gradients differ in the
// last bits (float32 epsilon 6e-8, relative). Through 30 steps of AdamW the losses stay within
// about 1e-7 of each other (measured: 5e-8 for 2 x 4, 7e-8 for 4 x 2); 1e-6 allows for other
// BLAS builds. A wrong scaling (a sum instead of a mean: steps twice as large) or other data
// moves the loss by far more, as the last check shows (a step per micro-batch: 9e-2).
constexpr double kAccumTolerance = 1e-6;

TEST_CASE("grad_accum_steps N over batch b gives the losses of one step on batch N*b, within float rounding") {
  Config big = tiny_config("accum_big");
  big.train.steps = 30;
  big.train.batch_size = 8;
  big.train.eval_full = true;  // every val window once, however the batches are cut
  TrainResult one_step = quiet_train(big);

  for (int64_t n : {2, 4}) {
    CAPTURE(n);
    Config accum = tiny_config("accum_" + std::to_string(n));
    accum.train.steps = 30;
    accum.train.batch_size = 8 / n;
    accum.train.grad_accum_steps = n;
    accum.train.eval_full = true;
    validate_config(accum);
    TrainResult micro = quiet_train(accum);
    REQUIRE(micro.losses.size() == one_step.losses.size());
    double diff = max_relative_difference(micro.losses, one_step.losses);
    MESSAGE("accumulation of " << n << " x " << 8 / n << " vs one batch of 8: largest relative loss difference " << diff
                               << " over 30 steps");
    CHECK(diff < kAccumTolerance);
    // (The estimate, val_loss, draws eval_iters batches of batch_size rows: other rows here.)
    CHECK(micro.full.loss == doctest::Approx(one_step.full.loss).epsilon(kAccumTolerance));
  }

  // The same micro-batches without accumulation (a step per micro-batch of 4) are another run.
  Config small = tiny_config("accum_small");
  small.train.steps = 30;
  small.train.batch_size = 4;
  TrainResult four = quiet_train(small);
  CHECK(max_relative_difference(four.losses, one_step.losses) > 100 * kAccumTolerance);
}

TEST_CASE("with grad_accum_steps 2, a run stopped at step k and resumed gives the uninterrupted losses bit for bit") {
  Config c = tiny_config("accum_resume");
  c.model.dropout = 0.1;  // each micro-batch's dropout stream is seeded from (seed, step, micro-batch)
  c.train.batch_size = 4;
  c.train.grad_accum_steps = 2;
  c.output.checkpoint_interval = 5;
  validate_config(c);
  StopAndResume r = train_stopped_and_resumed(c, 15);
  REQUIRE(r.first.losses.size() == 15);
  CHECK(r.rest.first_step == 15);
  CHECK(r.joined == r.full.losses);
  CHECK(r.rest.val_loss == r.full.val_loss);
  // One metrics row per optimizer step, not per micro-batch.
  int64_t rows = 0;
  for (const json& row : read_metrics((fs::path(c.output.run_dir) / "metrics.jsonl").string()))
    rows += row["kind"] == "train" ? 1 : 0;
  CHECK(rows == c.train.steps);
}

TEST_CASE("a resumed run may not change its global batch: grad_accum_steps 2 cannot continue with 3") {
  Config c = tiny_config("accum_change");
  c.train.batch_size = 4;
  c.train.grad_accum_steps = 2;
  validate_config(c);
  TrainOptions stop;
  stop.stop_after = 5;
  quiet_train(c, stop);
  c.train.grad_accum_steps = 3;
  TrainOptions resume;
  resume.resume = true;
  try {
    quiet_train(c, resume);
    FAIL("resumed with another global batch");
  } catch (const ConfigError& e) {
    std::string what = e.what();
    CHECK(what.find("train.grad_accum_steps") == 0);
    CHECK(what.find("cannot continue") != std::string::npos);
    CHECK(what.find("--set train.grad_accum_steps=2") != std::string::npos);
  }
}

TEST_CASE("train.grad_accum_steps is validated, and the error names the key") {
  Config c = tiny_config("accum_bad");
  c.train.grad_accum_steps = 0;
  try {
    validate_config(c);
    FAIL("accepted grad_accum_steps 0");
  } catch (const ConfigError& e) { CHECK(std::string(e.what()).find("train.grad_accum_steps: must be >= 1") == 0); }
}
