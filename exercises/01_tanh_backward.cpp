// Exercise 1 (lesson 2, autograd): the backward of tanh.
//
// The framework computes y = tanh(x) in the forward pass and keeps y. In the backward pass it
// receives dy = d loss / d y (the same shape as y) and needs dx = d loss / d x. Write that step.
//
//   shapes:  y, dy, and the result dx all have the shape of x (any shape, even a scalar ())
//   formula: d tanh(x) / dx = 1 - tanh(x)^2 = 1 - y^2, so by the chain rule dx = dy * (1 - y^2)
//   hint:    sf ops work elementwise on whole tensors: `dy * (1.0 - y * y)` is one line.
//            Use y, not x: it is what the graph saved, and it is exact where tanh saturates.
//
// Check it: scratchformer exercise check 1   (or ./run.sh exercise 1)
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor tanh_backward(const Tensor& y, const Tensor& dy) {
  // TODO: return dx.
  todo("tanh_backward in exercises/01_tanh_backward.cpp");
}

}  // namespace sf::exercise
