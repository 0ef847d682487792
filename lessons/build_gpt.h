// build_gpt.h: what lesson build_gpt returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: build_gpt.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Let's build a GPT, stage by stage: seven models on real text, the same step budget each,
// every one trained from each seed; then one block against N blocks on a larger budget.
struct BuildGptOptions {
  std::string corpus = "shakespeare";  // or "tang" (SF_LESSON_CORPUS=tang when run by name)
  int64_t steps = 1500;                // per stage
  int64_t batch_size = 16, block_size = 32;
  int64_t n_embd = 64, n_head = 4, n_layer = 4;
  double lr = 6e-3;
  int64_t depth_factor = 4;                    // the depth runs train depth_factor x steps (0: none)
  std::vector<uint64_t> seeds = {1337, 1338};  // each: initial weights and batches; samples: the first
  int64_t sample_chars = 200;
  int64_t val_batches = 0;  // batches of 64 val windows scored; 0: the whole val split
};
struct BuildGptResult {
  std::string corpus;  // its one-line description
  int64_t vocab_size = 0, train_chars = 0, val_chars = 0;
  std::vector<int64_t> params;                         // per stage, counted by the modules
  std::vector<int64_t> formula;                        // per stage, by the formula printed beside it
  std::vector<std::string> formula_text;               // the formula with the sizes put in
  std::vector<double> val_loss;                        // per stage, over the whole val split, mean over the seeds
  std::vector<std::vector<double>> val_loss_per_seed;  // [stage][seed]
  std::vector<std::vector<double>> curves;             // [stage]: train loss per bin of steps, mean over seeds
  std::vector<std::string> samples;                    // per stage, the first seed's model
  int64_t gpt_params = 0;                              // sf::GPT with the last stage's sizes
  // The depth runs: one block (stage layernorm) and N blocks, depth_factor x steps each.
  std::vector<int64_t> depth_layers, depth_params;
  std::vector<double> depth_val_loss;                        // mean over the seeds
  std::vector<std::vector<double>> depth_val_loss_per_seed;  // [model][seed]
  std::vector<std::vector<double>> depth_curves;             // [model]
  std::string depth_sample;                                  // the N-block model, first seed
};
BuildGptResult run_lesson_build_gpt(std::ostream& out, const BuildGptOptions& options);
BuildGptResult run_lesson_build_gpt(std::ostream& out);  // the defaults (and SF_LESSON_CORPUS)

}  // namespace sf::lessons
