// Reference solution of exercise 9 (spoiler): the online softmax.
#include <algorithm>
#include <cmath>
#include <limits>

#include "exercises/exercise.h"

namespace sf::exercise {

void online_softmax_update(SoftmaxState& state, double score) {
  if (score == -std::numeric_limits<double>::infinity()) return;  // adds e^-inf = 0
  if (score > state.max) {
    state.sum = state.sum * std::exp(state.max - score) + 1.0;  // rescale to the new max
    state.max = score;
  } else {
    state.sum += std::exp(score - state.max);
  }
}

SoftmaxState online_softmax_merge(const SoftmaxState& a, const SoftmaxState& b) {
  const double m = std::max(a.max, b.max);
  if (m == -std::numeric_limits<double>::infinity()) return {};  // both empty
  return {m, a.sum * std::exp(a.max - m) + b.sum * std::exp(b.max - m)};
}

}  // namespace sf::exercise
