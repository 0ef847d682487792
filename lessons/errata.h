// errata.h: the key numbers lesson errata prints (run_lesson_errata), and what its two files
// share: the GPT forward with article 004's mask
// bug, and the training loop both models run (errata.cpp, where the text's excerpts live).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "data/lm_batches.h"
#include "nn/gpt.h"

namespace sf::lessons {

// Errata: the worked examples of articles 000, 003 and 004 recomputed.
struct ErrataResult {
  std::vector<double> pe;                                         // (3, 4) sinusoidal table, positions 0..2
  std::vector<double> apple_input;                                // embedding of 苹果 + PE(2)
  int64_t sinusoidal_params = 0, learned_params = 0;              // position parameters of a GPT
  std::vector<double> exps;                                       // e^x of the scaled scores of 苹果
  double exp_sum = 0, rounded_sum = 0;                            // 4.3535; 4.36 from the rounded terms
  std::vector<double> weights;                                    // softmax
  std::vector<double> output, only_self, uniform;                 // w . V for three choices of w
  int64_t head_size = 0, mha_params = 0, article_mha_params = 0;  // d_model 4, h 4
  int64_t mha_params_768 = 0, article_mha_params_768 = 0;         // d_model 768, h 12
  std::vector<double> article_head_sums;                          // the four example weight rows of 003's heads
  std::vector<double> pre_stds, post_stds;                        // per-token std after one Pre-LN / Post-LN block
  double pre_post_diff = 0;
  double norm_repeat_diff = 0, norm_grad_diff = 0;       // norm1(x) three times against once
  std::vector<double> unmasked_weights, masked_weights;  // (3, 3): 004's snippet, and assigned
  // The GPTs trained with and without the causal mask (errata_mask.cpp).
  int64_t leak_params = 0;
  std::vector<double> correct_losses, leaky_losses;     // training loss at every step
  double correct_train = 0, leaky_train = 0;            // teacher-forced, on training windows
  double correct_val = 0, leaky_val = 0;                // teacher-forced, on held-out windows
  double correct_generation = 0, leaky_generation = 0;  // from prefixes only, held out
  double correct_word_share = 0, leaky_word_share = 0;  // of the greedy samples' words
};
// A slow lesson (Lesson::slow): its two GPTs train for about 10 s of CPU, once per process.
ErrataResult run_lesson_errata(std::ostream& out);
// Its steps 1-7 (the articles' examples, no training) and 8-10 (errata_mask.cpp: the GPTs).
void errata_articles(std::ostream& out, ErrataResult& r);
void errata_mask_training(std::ostream& out, ErrataResult& r);

}  // namespace sf::lessons

namespace sf::lessons::errata {

// model's logits (B, T, V) for idx (B, T) with no causal mask: every position sees every token.
Tensor leaky_forward(GPT& model, const IntTensor& idx);

// `steps` steps of AdamW (lr 3e-3, no weight decay, clipping at 1.0) on `batches`, with the
// causal mask (model.forward) or without it (leaky_forward); a progress bar on stderr.
// Returns the training loss of every step.
std::vector<double> train(GPT& model, bool leaky, data::RandomWindows& batches, int64_t steps);

}  // namespace sf::lessons::errata
