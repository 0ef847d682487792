// Reference solution of exercise 4 (spoiler): the sinusoidal position table.
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

Tensor sinusoidal_positions(int64_t T, int64_t C, int64_t offset) {
  std::vector<double> pe(static_cast<size_t>(T * C));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = 0; c < C; ++c) {
      const double i2 = static_cast<double>(c - c % 2);  // 2i: columns 2i and 2i+1 share a frequency
      const double angle = static_cast<double>(offset + t) / std::pow(10000.0, i2 / static_cast<double>(C));
      pe[t * C + c] = c % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  return Tensor::from_vector(pe, {T, C}, DType::f64);
}

}  // namespace sf::exercise
