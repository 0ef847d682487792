// Exercise 18 (lesson 16 mixed-precision): dynamic loss scaling (torch.cuda.amp.GradScaler).
//
// fp16 gradients below 2^-24 round to zero. Training multiplies the loss by a scale S before
// backward, so every gradient arrives multiplied by S; this function runs after backward: it
// divides the gradients by S again, and adjusts S. Too large an S overflows some gradient to
// inf or nan: then the step is skipped and S halves. After growth_interval good steps in a row,
// S doubles, to find the largest scale that does not overflow.
//
//   input:   scaler {scale S, good_steps, growth_factor, backoff_factor, growth_interval}
//            (changed in place), grads (changed in place: divided by S)
//   formula: g = g / S for every element
//            if any g is inf or nan: S *= backoff_factor, good_steps = 0, return false (skip)
//            else: good_steps += 1; if good_steps == growth_interval: S *= growth_factor,
//                  good_steps = 0; return true (step)
//   contract: growth_factor and backoff_factor are the scaler's own (the checker tries 4 and 0.25).
//
// Derive it on paper first. Stuck? scratchformer exercise hint 18 (1 the idea), then
// hint 18 2 (the formula) and hint 18 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 18   (or ./run.sh exercise 18)
// 中文说明：exercises/zh/18_loss_scaling.md（或 scratchformer exercise show 18 --lang zh）
#include <cmath>

#include "exercises/exercise.h"

namespace sf::exercise {

bool loss_scaler_update(LossScaler& scaler, std::vector<std::vector<double>>& grads) {
  // TODO: unscale, decide, adjust the scale.
  todo("loss_scaler_update in exercises/18_loss_scaling.cpp");
}

}  // namespace sf::exercise
