// head_scores.cpp: the previous-token, induction and word-start scores of one head (head_scores.h).
#include "train/head_scores.h"

#include "autograd/errors.h"
#include "autograd/tensor.h"

namespace sf {

static void check_square(const AttentionMatrix& w, const char* what) {
  for (const auto& row : w)
    if (row.size() != w.size())
      throw ShapeError(std::string(what) + ": the attention matrix must be square (queries x keys), got a row of " +
                       std::to_string(row.size()) + " keys for " + std::to_string(w.size()) + " queries");
}

double previous_token_score(const AttentionMatrix& w) {
  check_square(w, "previous_token_score");
  const size_t T = w.size();
  if (T < 2) return 0;
  double sum = 0;
  for (size_t q = 1; q < T; ++q) sum += w[q][q - 1];
  return sum / static_cast<double>(T - 1);
}

double induction_score(const AttentionMatrix& w, int64_t period) {
  check_square(w, "induction_score");
  if (period < 1 || static_cast<int64_t>(w.size()) < 2 * period)
    throw ValueError("induction_score: a period of " + std::to_string(period) + " needs at least " +
                     std::to_string(2 * period) + " positions, got " + std::to_string(w.size()));
  const size_t p = static_cast<size_t>(period);
  double sum = 0;
  for (size_t q = p; q < 2 * p; ++q) sum += w[q][q - p + 1];  // the token after q's earlier copy
  return sum / static_cast<double>(p);
}

double word_start_score(const AttentionMatrix& w, const std::vector<bool>& is_word_start) {
  check_square(w, "word_start_score");
  if (is_word_start.size() != w.size())
    throw ShapeError("word_start_score: " + std::to_string(is_word_start.size()) + " word-start marks for " +
                     std::to_string(w.size()) + " positions");
  const size_t T = w.size();
  if (T < 2) return 0;
  double sum = 0;
  for (size_t q = 1; q < T; ++q)
    for (size_t k = 0; k <= q; ++k)
      if (is_word_start[k]) sum += w[q][k];
  return sum / static_cast<double>(T - 1);
}

double previous_token_baseline(int64_t length) {
  double sum = 0;
  for (int64_t q = 1; q < length; ++q) sum += 1.0 / static_cast<double>(q + 1);
  return length < 2 ? 0 : sum / static_cast<double>(length - 1);
}

double induction_baseline(int64_t period) {
  double sum = 0;
  for (int64_t q = period; q < 2 * period; ++q) sum += 1.0 / static_cast<double>(q + 1);
  return period < 1 ? 0 : sum / static_cast<double>(period);
}

double word_start_baseline(const std::vector<bool>& is_word_start) {
  const size_t T = is_word_start.size();
  if (T < 2) return 0;
  double sum = 0;
  int64_t starts = is_word_start[0] ? 1 : 0;
  for (size_t q = 1; q < T; ++q) {
    starts += is_word_start[q] ? 1 : 0;
    sum += static_cast<double>(starts) / static_cast<double>(q + 1);
  }
  return sum / static_cast<double>(T - 1);
}

std::vector<bool> word_starts(const std::vector<std::string>& characters) {
  auto is_space = [](const std::string& c) { return c == " " || c == "\n"; };
  std::vector<bool> starts(characters.size(), false);
  for (size_t i = 0; i < characters.size(); ++i)
    starts[i] = !is_space(characters[i]) && (i == 0 || is_space(characters[i - 1]));
  return starts;
}

std::vector<int32_t> repeated_random_tokens(int64_t period, int64_t vocab_size, uint64_t seed) {
  if (period < 1 || vocab_size < 1)
    throw ValueError("repeated_random_tokens: period and vocab_size must be positive, got " + std::to_string(period) +
                     " and " + std::to_string(vocab_size));
  Generator gen(seed);
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < period; ++i) ids.push_back(static_cast<int32_t>(gen.randint(vocab_size)));
  for (int64_t i = 0; i < period; ++i) ids.push_back(ids[static_cast<size_t>(i)]);
  return ids;
}

}  // namespace sf
