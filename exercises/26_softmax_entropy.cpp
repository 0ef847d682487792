// Exercise 26 (lesson 6 scaling): the entropy of attention weights.
//
// Without the 1/sqrt(d_k), scores grow with d_k and softmax collapses onto one key: its rows lose
// entropy, and the gradient through them vanishes. Entropy is how the lesson measures that
// collapse: log N for uniform weights over N keys, 0 for a one-hot row.
//
//   shapes:  p (..., N), each row a probability distribution -> H (...), one value per row
//   contract: natural logarithm; an entry p = 0 (a masked key) contributes 0, as the limit of
//            p log p; keeps p's dtype.
//
// Stuck? scratchformer exercise hint 26 (1 the idea, 2 the formula, 3 the code).
// Check it: scratchformer exercise check 26   (or ./run.sh exercise 26)
// 中文说明：exercises/zh/26_softmax_entropy.md（或 scratchformer exercise show 26 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor softmax_entropy(const Tensor& p) {
  // TODO: return the entropy of each row.
  todo("softmax_entropy in exercises/26_softmax_entropy.cpp");
}

}  // namespace sf::exercise
