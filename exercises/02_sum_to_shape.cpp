// Exercise 2 (lesson 3, broadcasting): reduce a gradient over the broadcast dimensions.
//
// a * b with a (2, 1, 4) and b (3, 1) broadcasts both to (2, 3, 4). The gradient flowing back
// has the broadcast shape (2, 3, 4), but a's gradient must have a's shape: every copy that
// broadcasting made of an element of a adds its gradient back into that element. Write the
// reduction every broadcasting backward needs (the framework's is sf::sum_to).
//
//   shapes:  g (the broadcast shape), shape (what to reduce to) -> a tensor of exactly `shape`
//   formula: sum over the leading axes that `shape` does not have, then over every axis where
//            `shape` has size 1 but g does not (keeping that axis, with size 1)
//   example: (2, 3, 4) -> (3, 1): sum over axis 0 -> (3, 4), then over axis 1 keepdim -> (3, 1);
//            (2, 3) -> (): sum over both axes -> a scalar
//   hint:    sf::sum(t, {axes}) drops the axes, sf::sum(t, {axes}, true) keeps them as size 1.
//
// Check it: scratchformer exercise check 2   (or ./run.sh exercise 2)
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor sum_to_shape(const Tensor& g, const Shape& shape) {
  // TODO: return g summed down to `shape`.
  todo("sum_to_shape in exercises/02_sum_to_shape.cpp");
}

}  // namespace sf::exercise
