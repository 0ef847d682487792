// Exercise 16 (lesson 13 training): clipping the gradients by their global norm.
//
// One bad batch can produce a gradient spike that throws the weights far away. Clipping
// rescales all gradients together (so their direction is kept) when their joint length is too
// large, as torch.nn.utils.clip_grad_norm_ does.
//
//   input:   grads, one vector per parameter (changed in place), max_norm > 0
//   formula: norm = sqrt(sum over every element of every gradient of g^2)
//            c = max_norm / (norm + 1e-6);  if c < 1, multiply every element by c
//            return norm (before clipping: it is what a training log shows)
//
// Derive it on paper first. Stuck? scratchformer exercise hint 16 (1 the idea), then
// hint 16 2 (the formula) and hint 16 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 16   (or ./run.sh exercise 16)
// 中文说明：exercises/zh/16_clip_grad_norm.md（或 scratchformer exercise show 16 --lang zh）
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

double clip_grad_norm(std::vector<std::vector<double>>& grads, double max_norm) {
  // TODO: clip in place, return the norm before clipping.
  todo("clip_grad_norm in exercises/16_clip_grad_norm.cpp");
}

}  // namespace sf::exercise
