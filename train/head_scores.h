// head_scores.h: three scores of one attention head, each a number between 0 and 1 read from
// its attention matrix w[query][key] (rows sum to 1, causal: key <= query), and what a head
// spreading its attention evenly over the past would score (the baseline a score is read against).
//
//   previous-token  the attention on the token just before (key q - 1), mean over queries q >= 1
//   induction       on a sequence that repeats its first `period` tokens once
//                   (r_0 .. r_{p-1} r_0 .. r_{p-1}): from each token of the second copy, the
//                   attention on the token that followed its earlier occurrence (key q - p + 1),
//                   mean over queries q in [p, 2p). A head that does this can copy what came
//                   next last time: Olsson et al. 2022, "In-context learning and induction heads".
//   word-start      the attention on the tokens marked as word starts (any key <= q), mean over
//                   queries q >= 1
//
// Nothing here knows about models: the lessons and the inspector pass the matrices they record.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sf {

using AttentionMatrix = std::vector<std::vector<double>>;  // [query][key], causal

double previous_token_score(const AttentionMatrix& w);
double induction_score(const AttentionMatrix& w, int64_t period);
double word_start_score(const AttentionMatrix& w, const std::vector<bool>& is_word_start);

// What attention spread evenly over keys 0..q scores, with the same queries as each score above.
double previous_token_baseline(int64_t length);
double induction_baseline(int64_t period);
double word_start_baseline(const std::vector<bool>& is_word_start);

// The word starts of a text's characters: a character that is not a space or newline and comes
// first or right after a space or newline.
std::vector<bool> word_starts(const std::vector<std::string>& characters);

// `period` tokens drawn uniformly from [0, vocab_size) with a seeded generator, then the same
// `period` tokens again: the input of induction_score.
std::vector<int32_t> repeated_random_tokens(int64_t period, int64_t vocab_size, uint64_t seed);

}  // namespace sf
