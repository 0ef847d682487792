// cost_common.h: small helpers the lessons on attention's cost and heads share: a stopwatch for
// measured steps, byte counts printed for people, a gnuplot of measured curves, and one way to
// train the small GPTs that lessons 19, 22 and 24 compare.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/lm_batches.h"
#include "data/tokenizer.h"
#include "nn/gpt.h"
#include "train/progress.h"

namespace sf::lessons {

// The fastest of `repeats` runs of f, in seconds (after one untimed warm-up run when warm_up).
double fastest_seconds(const std::function<void()>& f, int repeats, bool warm_up = true);

// 16777216 -> "16.0 MiB", 2415919104 -> "2.25 GiB", 512 -> "512 B" (powers of 1024).
std::string fmt_bytes(double bytes);

// 4194304 -> "4,194,304".
std::string fmt_count(int64_t n);

// One curve of a plot: y against the shared x values, with its legend title.
struct Curve {
  std::string title;
  std::vector<double> y;
};
// The gnuplot body of a plot of curves against x (log scales when asked).
std::string curves_plot(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                        const std::vector<double>& x, const std::vector<Curve>& curves, bool log_x, bool log_y);

// ---- small GPTs trained on Tiny Shakespeare (lessons 19, 22 and 24) ----

// One training budget, the same for every model a lesson compares.
struct SmallTraining {
  int64_t steps = 400;
  int64_t batch_size = 16;
  int64_t block_size = 64;  // the windows the model trains on
  double lr = 2e-3;         // AdamW, cosine to a tenth after 10% warmup
  uint64_t seed = 1337;     // batches
};

// Tiny Shakespeare as characters, 90% train / 10% val (the shipped copy; nothing downloaded).
struct CharCorpus {
  data::Tokens train, val;
  int64_t vocab_size = 0;
  std::shared_ptr<const data::Tokenizer> tokenizer;
};
const CharCorpus& shakespeare_chars();

// Trains `model` with the budget (progress on `progress`, whose steps count from `first_step`);
// returns the training loss at every step.
std::vector<double> train_small(GPT& model, const CharCorpus& corpus, const SmallTraining& t, Progress& progress,
                                int64_t first_step);
// Mean cross-entropy over the first `windows` consecutive val windows of length T.
double val_loss_of(GPT& model, const CharCorpus& corpus, int64_t T, int64_t windows);
// A progress bar on stderr when it is a terminal, log lines otherwise.
Progress lesson_progress(int64_t total_steps);

}  // namespace sf::lessons
