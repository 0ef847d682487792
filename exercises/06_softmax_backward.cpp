// Exercise 6 (lesson 5 attention): the backward of softmax.
//
// y = softmax(x) over the last axis; the backward receives dy and must return dx.
//
//   shapes:  y, dy (..., N) -> dx (..., N)
//   edges:   masked entries have y = 0 and must get dx = 0; a row of one gets dx = 0.
//   idea:    write the Jacobian dy_i/dx_j of one row (i = j and i != j apart), then apply its
//            transpose to dy without building it (lesson attention: "derive it first").
//   contract: dx keeps y's dtype; masked entries (y = 0) get exactly 0.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 6 (1 the idea), then
// hint 6 2 (the formula) and hint 6 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 6   (or ./run.sh exercise 6)
// 中文说明：exercises/zh/06_softmax_backward.md（或 scratchformer exercise show 6 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor softmax_backward(const Tensor& y, const Tensor& dy) {
  // TODO: return dx.
  todo("softmax_backward in exercises/06_softmax_backward.cpp");
}

}  // namespace sf::exercise
