// embeddings.h: what lesson embeddings returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: embeddings.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Token embeddings.
struct EmbeddingsResult {
  double lookup_vs_onehot;              // max |embedding(W, ids) - onehot(ids) @ W|
  double grad_lookup_vs_onehot;         // same for dW
  std::vector<double> grad_row_wo;      // dW row of 我 (used twice) = sum of its two upstream rows
  std::vector<double> grad_row_unused;  // dW row of a token not in the sentence (zeros)
  int64_t lookup_reads, onehot_mults;   // for GPT-2 sizes: T*C numbers read vs T*V*C multiplies
};
EmbeddingsResult run_lesson_embeddings(std::ostream& out);

}  // namespace sf::lessons
