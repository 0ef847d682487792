// compare_ln.h: the Pre-LN versus Post-LN study (Xiong et al., "On Layer Normalization in the
// Transformer Architecture", ICML 2020), measured on our own models.
//
// `scratchformer compare configs/compare_ln.json` runs four measurements on a GPT, each over
// several seeds (the model's initial weights and its batches), and writes report.md, CSV files
// and gnuplot images into the config's output.run_dir:
//   1. per-layer gradient norm of each block's second FFN matrix (mlp.c_proj.weight) at
//      initialisation: the gradient averaged element-wise over many mini-batches, then its
//      Frobenius norm (the paper's method), for Pre-LN and Post-LN;
//   2. the last layer's norm of (1) versus depth, fitted as norm ~ L^s;
//   3. hidden-state norms after each block at initialisation;
//   4. training with Adam: Post-LN and Pre-LN, each without and with learning-rate warmup at
//      optim.lr, and a sweep over compare.lrs (Post-LN with and without warmup, Pre-LN without).
// The study does not change the model: the config says what the paper's setting is (see
// configs/compare_ln.json). Every finding is computed, printed with its criterion, and ends
// "reproduced" or "not reproduced".
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "train/config.h"

namespace sf {

// The "compare" section of a study config (every other section is an ordinary run config).
struct CompareOptions {
  int64_t grad_batches = 32;                     // mini-batches averaged for the gradient norms
  std::vector<int64_t> depths = {6, 8, 10, 12};  // layer counts for measurement 2
  int64_t warmup_steps = 200;                    // warmup length of the "with warmup" runs
  bool train_curves = true;                      // measurement 4 (the slow part)
  int64_t seeds = 3;                             // seeds train.seed, train.seed + 1, ...
  std::vector<double> lrs = {5e-4, 1e-3, 2e-3};  // the learning-rate sweep of measurement 4
  bool quick = false;                            // 2 seeds, 4 gradient batches, no sweep beyond optim.lr
};

struct CompareStudy {
  Config base;  // the model/data/optimizer every variant starts from
  CompareOptions options;
};

// Reads a study config: a run config plus a "compare" section. --set overrides apply to both
// (e.g. train.steps=100, compare.depths=[4,8]). Throws ConfigError naming the key path.
CompareStudy load_compare_study(const std::string& path, const std::vector<std::string>& overrides = {});

// Finding 1a's criterion: the last/first layer ratio exceeds `bar` in every seed (a mean over few
// seeds can pass on the strength of one seed).
bool grows_in_every_seed(const std::vector<double>& ratios, double bar);

// Finding 1b's criterion: every seed's last/first ratio lies within [1/band, band] ("about flat"
// by the same bar as 1a's growth, on either side) and below that seed's Post-LN ratio.
bool flat_in_every_seed(const std::vector<double>& pre_ratios, const std::vector<double>& post_ratios, double band);

// Runs the study and writes the report; progress goes to `log`. Returns the report's path.
std::string run_compare_study(const CompareStudy& study, std::ostream& log);

}  // namespace sf
