// Exercise 4 (lesson 8 positions): the sinusoidal position table of "Attention Is All You Need".
//
// Each position p gets a vector of C numbers: pairs of sine and cosine waves, one frequency
// per pair, from one cycle per 2 pi positions down to one per 10000 * 2 pi.
//
//   shapes:  T positions, C channels (even), first position `offset` -> PE (T, C), float64
//   formula: for row t, position p = offset + t, and column pair i (columns 2i and 2i + 1):
//              PE[t, 2i]     = sin(p / 10000^(2i / C))
//              PE[t, 2i + 1] = cos(p / 10000^(2i / C))
//
// Derive it on paper first. Stuck? scratchformer exercise hint 4 (1 the idea), then
// hint 4 2 (the formula) and hint 4 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 4   (or ./run.sh exercise 4)
// 中文说明：exercises/zh/04_sinusoidal_positions.md（或 scratchformer exercise show 4 --lang zh）
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

Tensor sinusoidal_positions(int64_t T, int64_t C, int64_t offset) {
  // TODO: return PE (T, C).
  todo("sinusoidal_positions in exercises/04_sinusoidal_positions.cpp");
}

}  // namespace sf::exercise
