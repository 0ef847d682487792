// task.h: the first lesson, the task itself. A language model reads characters and scores the
// next one; cross-entropy is its loss; a bigram table learns it in seconds and is sampled with
// temperature, top-k and top-p; a small slice of text shows overfitting. Text: task.md.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "nn/sampling.h"

namespace sf::lessons {

// The distribution the sampler draws the next token from, for one row of logits: softmax(z / T)
// cut to the top_k most likely tokens, then to the smallest set whose probability reaches top_p,
// renormalised (the rules of nn/sampling.cpp); temperature 0 puts all the mass on the largest logit.
std::vector<double> sampling_distribution(const std::vector<float>& logits, const SampleOptions& o);
// -sum p ln p in nats (0 terms skipped).
double entropy_of(const std::vector<double>& p);

// One sampling setting and what it did to 2000 sampled characters.
struct TaskSample {
  SampleOptions options;
  double mean_entropy;  // of the distribution drawn from, averaged over the drawn characters
  double mean_kept;     // tokens left with a nonzero probability, averaged the same way
  int64_t distinct;     // distinct characters in the sample
  std::string text;     // the sample's beginning, as printed
};

struct TaskResult {
  int64_t vocab_size = 0, train_chars = 0, val_chars = 0;
  double ln_vocab = 0;              // ln V: the loss of the uniform guess
  double untrained_max_logit = 0;   // the largest |entry| of a freshly initialised bigram table
  double untrained_bigram_val = 0;  // a freshly initialised bigram table on val
  double untrained_gpt_val = 0;     // a freshly initialised 4-block GPT on val
  double counts_val = 0;            // the bigram table of counts from train (add-one), on val
  std::vector<double> curve_steps;  // where the curves were measured
  std::vector<double> train_curve, val_curve;
  double final_train = 0, final_val = 0;
  std::vector<TaskSample> samples;
  std::vector<float> row_t;  // the trained table's logits for the character after 't'
  int64_t slice_chars = 0;   // the small slice overfitting trains on
  std::vector<double> overfit_steps, overfit_train, overfit_val;
  double overfit_best_val = 0, overfit_best_step = 0, overfit_final_train = 0, overfit_final_val = 0;
};

TaskResult run_lesson_task(std::ostream& out);

}  // namespace sf::lessons
