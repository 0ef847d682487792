// Exercise 2 (lesson 3 broadcasting): reduce a gradient over the broadcast dimensions.
//
// a * b with a (2, 1, 4) and b (3, 1) broadcasts both to (2, 3, 4). The gradient flowing back
// has the broadcast shape (2, 3, 4), but a's gradient must have a's shape: every copy that
// broadcasting made of an element of a adds its gradient back into that element. Write the
// reduction every broadcasting backward needs (the framework's is sf::sum_to).
//
//   shapes:  g (the broadcast shape), shape (what to reduce to) -> a tensor of exactly `shape`
//   idea:    every copy broadcasting made of an element sends its gradient back into it.
//   contract: keeps g's dtype; a `shape` with more axes than g throws sf::ShapeError.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 2 (1 the idea), then
// hint 2 2 (the formula) and hint 2 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 2   (or ./run.sh exercise 2)
// 中文说明：exercises/zh/02_sum_to_shape.md（或 scratchformer exercise show 2 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor sum_to_shape(const Tensor& g, const Shape& shape) {
  // TODO: return g summed down to `shape`.
  todo("sum_to_shape in exercises/02_sum_to_shape.cpp");
}

}  // namespace sf::exercise
