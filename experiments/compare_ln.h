// compare_ln.h: the Pre-LN versus Post-LN study (Xiong et al., "On Layer Normalization in the
// Transformer Architecture", ICML 2020), measured on our own models.
//
// `scratchformer compare configs/compare_ln.json` runs four measurements on a GPT and writes
// report.md, CSV files and gnuplot images into the config's output.run_dir:
//   1. per-layer gradient norm of each block's second FFN matrix (mlp.c_proj.weight) at
//      initialisation: the gradient averaged element-wise over many mini-batches, then its
//      Frobenius norm (the paper's method), for Pre-LN and Post-LN with Xavier init;
//   2. the last layer's norm of (1) versus depth;
//   3. hidden-state norms after each block at initialisation;
//   4. training curves at one peak learning rate with Adam: Post-LN and Pre-LN, each without and
//      with learning-rate warmup; the table shows each one's training loss as the mean over its
//      last 10% of steps (at least 1), since one step's loss is one batch's.
// Every finding sentence in the report is computed from these numbers.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "experiments/config.h"

namespace sf {

// The "compare" section of a study config (every other section is an ordinary run config).
struct CompareOptions {
  int64_t grad_batches = 32;                   // mini-batches averaged for the gradient norms
  std::vector<int64_t> depths = {6, 8, 10, 12, 14};  // layer counts for measurement 2
  int64_t warmup_steps = 200;                  // warmup length of the "with warmup" runs
  bool train_curves = true;                    // measurement 4 (the slow part)
};

struct CompareStudy {
  Config base;  // the model/data/optimizer every variant starts from
  CompareOptions options;
};

// Reads a study config: a run config plus a "compare" section. --set overrides apply to both
// (e.g. train.steps=100, compare.depths=[4,8]). Throws ConfigError naming the key path.
CompareStudy load_compare_study(const std::string& path, const std::vector<std::string>& overrides = {});

// Runs the study and writes the report; progress goes to `log`. Returns the report's path.
std::string run_compare_study(const CompareStudy& study, std::ostream& log);

}  // namespace sf
