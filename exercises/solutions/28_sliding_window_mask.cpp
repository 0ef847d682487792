// Reference solution of exercise 28 (spoiler): the sliding-window causal mask.
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor sliding_window_mask(int64_t T, int64_t S, int64_t W) {
  if (W < 1 || T < 0 || S < T)
    throw ShapeError("sliding_window_mask: T " + std::to_string(T) + ", S " + std::to_string(S) + ", W " +
                     std::to_string(W) + " (need W >= 1 and S >= T)");
  std::vector<double> m(static_cast<size_t>(T * S), 0.0);
  for (int64_t t = 0; t < T; ++t) {
    const int64_t p = S - T + t;  // the query's position
    for (int64_t s = 0; s < S; ++s) m[t * S + s] = (s > p || s <= p - W) ? 1.0 : 0.0;
  }
  return Tensor::from_vector(m, {T, S}, DType::f64);
}

}  // namespace sf::exercise
