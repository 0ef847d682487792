// Exercise 5 (lesson 5 attention): softmax, the way attention turns scores into weights.
//
//   shapes:  x (..., N) -> y of the same shape; each row (the last axis) sums to 1
//   edges:   logits like 1000 (e^1000 is inf in any float), -inf scores (masked keys, which
//            must get probability 0), a row of one.
//   contract: keeps x's dtype; a fully masked row (every score -inf) gives zeros, as
//            sf::softmax does; do not call sf::softmax (it is what the checker compares with).
//
// Derive it on paper first. Stuck? scratchformer exercise hint 5 (1 the idea), then
// hint 5 2 (the formula) and hint 5 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 5   (or ./run.sh exercise 5)
// 中文说明：exercises/zh/05_softmax_forward.md（或 scratchformer exercise show 5 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor softmax_forward(const Tensor& x) {
  // TODO: return softmax over the last axis.
  todo("softmax_forward in exercises/05_softmax_forward.cpp");
}

}  // namespace sf::exercise
