// Exercise 6 (lesson 5, attention): the backward of softmax.
//
// y = softmax(x) over the last axis; the backward receives dy and must return dx.
//
//   shapes:  y, dy (..., N) -> dx (..., N)
//   formula: the Jacobian of one row is dy_i/dx_j = y_i (delta_ij - y_j), so
//              dx_i = y_i (dy_i - sum_j dy_j y_j)
//   hint:    the sum is one number per row: sf::sum(dy * y, {-1}, true) keeps it as (..., 1)
//            so that it broadcasts back over the row. One line, from y alone (no exp needed).
//   edges:   masked entries have y = 0 and must get dx = 0; a row of one gets dx = 0.
//
// Check it: scratchformer exercise check 6   (or ./run.sh exercise 6)
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  // TODO: return dx.
  todo("softmax_backward in exercises/06_softmax_backward.cpp");
}

}  // namespace sf::exercise
