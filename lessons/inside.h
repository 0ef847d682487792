// inside.h: what lesson inside returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: inside.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "train/inspect.h"
#include "nn/gpt.h"

namespace sf::data {
class Tokenizer;
}

namespace sf::lessons {

// What lessons 15 and 25 measure of each head of a trained GPT (train/head_scores.h):
// previous-token and word-start scores over val windows, the induction score over sequences of
// random tokens repeated once, each a mean over those inputs.
struct HeadScore {
  int64_t layer = 0, head = 0;
  double prev = 0, induction = 0, word_start = 0;
};
struct HeadScoreBaselines {  // what attention spread evenly over the past scores on the same inputs
  double prev = 0, induction = 0, word_start = 0;
};
// The thresholds the lessons read the scores against (the word-start one is a multiple of its baseline).
constexpr double kPreviousTokenThreshold = 0.3, kInductionThreshold = 0.3, kWordStartFactor = 2.0;
// `windows` windows of the model's block size spread evenly over `val`, and `sequences` repeated
// random sequences (period: half the block size, seeds 1, 2, ...).
std::vector<HeadScore> score_heads(GPT& model, const data::Tokenizer& tokenizer, const std::vector<int32_t>& val,
                                   int64_t windows, int64_t sequences, HeadScoreBaselines* baselines);
// Three lines, one per score: the heads at or over its threshold as "layer.head (score)", "-" for
// none; only those of `only_layer` when it is >= 0. In the language of `out`.
// The score table: a header of two lines, then a row per head (layer, head, each score per seed).
std::string score_table_header(const std::vector<int64_t>& seeds);
std::string score_table_row(const std::vector<std::vector<HeadScore>>& per_seed, size_t head_index);
std::string heads_over_thresholds(std::ostream& out, const std::vector<HeadScore>& scores,
                                  const HeadScoreBaselines& even, int64_t only_layer = -1);

// Looking inside a trained transformer: the default GPT from two seeds, its heads scored,
// and the reverse model's cross-attention, measured with train/inspect.h.
struct InsideOptions {
  int64_t gpt_steps = 1500;                   // configs/default.json's own budget
  std::vector<int64_t> seeds = {1337, 1338};  // the default GPT is trained from each
  int64_t reverse_steps = 600;                // of configs/reverse.json's 1500, to keep the lesson to minutes
  int64_t role_windows = 16;                  // val windows the scores are averaged over
  int64_t induction_sequences = 8;            // repeated random sequences the induction score is averaged over
  bool full_val = true;                       // the GPT's val loss over the whole val split (false: 20 batches)
  int64_t eval_iters = 0;                     // batches per loss estimate (0: each config's own, 20 and 10)
};
struct InsideResult {
  int64_t gpt_steps = 0, reverse_steps = 0, block_size = 0;
  std::vector<double> gpt_val_loss;            // per seed, the whole val split
  std::vector<std::vector<HeadScore>> scores;  // [seed][layer * heads + head]
  HeadScoreBaselines even;                     // what even attention scores on the same inputs
  AttentionMaps prompt_maps;                   // the first seed's model over the lesson's prompt
  AttentionMaps induction_maps;                // the first seed's model over one repeated sequence
  int64_t induction_layer = 0;                 // the layer of its highest induction score
  double reverse_accuracy = -1;                // exact-match on the held-out sequences
  CrossAttentionReport cross;                  // the share on the mirrored position, per decoder layer
};
InsideResult run_lesson_inside(std::ostream& out, const InsideOptions& options);
InsideResult run_lesson_inside(std::ostream& out);

}  // namespace sf::lessons
