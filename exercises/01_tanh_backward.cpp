// Exercise 1 (lesson 2 autograd): the backward of tanh.
//
// The framework computes y = tanh(x) in the forward pass and keeps y. In the backward pass it
// receives dy = d loss / d y (the same shape as y) and needs dx = d loss / d x. Write that step.
//
//   shapes:  y, dy, and the result dx all have the shape of x (any shape, even a scalar ())
//   idea:    the chain rule: the gradient arriving from above times tanh's local derivative,
//            written from the saved output y (exact where tanh saturates) rather than from x.
//   contract: dx has y's shape and dtype (float32 in, float32 out).
//
// Derive it on paper first. Stuck? scratchformer exercise hint 1 (1 the idea), then
// hint 1 2 (the formula) and hint 1 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 1   (or ./run.sh exercise 1)
// 中文说明：exercises/zh/01_tanh_backward.md（或 scratchformer exercise show 1 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor tanh_backward(const Tensor& y, const Tensor& dy) {
  // TODO: return dx.
  todo("tanh_backward in exercises/01_tanh_backward.cpp");
}

}  // namespace sf::exercise
