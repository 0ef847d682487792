// Exercise 5 (lesson 5, attention): softmax, the way attention turns scores into weights.
//
//   shapes:  x (..., N) -> y of the same shape; each row (the last axis) sums to 1
//   formula: y_i = e^(x_i - m) / sum_j e^(x_j - m), with m = max_j x_j of the row.
//            Subtracting m changes nothing mathematically and keeps every exponent <= 0.
//   hint:    sf::max(x, -1, true) is the row max with the axis kept (size 1), so it broadcasts
//            against x; sf::exp, and sf::sum(e, {-1}, true) for the row sums. Do not call
//            sf::softmax: that is the answer the checker compares with.
//   edges:   logits like 1000 (e^1000 is inf in any float), -inf scores (masked keys, which
//            must get probability 0), a row of one.
//
// Check it: scratchformer exercise check 5   (or ./run.sh exercise 5)
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor softmax_forward(const Tensor& x) {
  // TODO: return softmax over the last axis.
  todo("softmax_forward in exercises/05_softmax_forward.cpp");
}

}  // namespace sf::exercise
