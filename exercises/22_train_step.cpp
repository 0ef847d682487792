// Exercise 22 (lesson 14 build-gpt; the loop of lesson 13 training): one training step.
//
// Everything of lesson 13 training in the order a step runs it, with your own pieces: the
// gradients of the last step must not leak into this one, the loss is differentiated, one bad
// batch must not throw the weights far (clipping), and the rate follows the schedule.
//
//   input:    the model, a batch x, y (B, T), the state carried from step to step, the config
//   contract: 1. zero every gradient of the model   2. forward + loss (your gpt_forward)
//             3. backward   4. clip the global norm of all gradients to config.max_norm (16)
//             5. lr = the schedule's rate of update state.step (15)
//             6. AdamW (17) on every parameter of model.parameters(), t = state.step + 1, with
//                lr and the config's betas, eps, weight decay; weight decay only for parameters
//                with dim() >= 2 (biases and LayerNorm weights get none)
//             7. state.step + 1. state.m / state.v hold one moment vector per parameter, in the
//                order of model.parameters(); make them (zeros) when they are empty.
//             Returns the loss, the norm before clipping, and the rate used.
//   idea:     your clipping, schedule and AdamW work on doubles: exercise.h has the functions that
//             read a tensor's values and write them back. Stuck? `scratchformer exercise hint 22`.
//
// Check it: scratchformer exercise check 22   (or ./run.sh exercise 22)
// 中文说明：exercises/zh/22_train_step.md（或 scratchformer exercise show 22 --lang zh）
#include "exercises/exercise.h"

namespace sf::exercise {

StepResult train_step(GPT& model, const IntTensor& x, const IntTensor& y, TrainState& state,
                      const TrainStepConfig& config) {
  // TODO: one step as above.
  todo("train_step in exercises/22_train_step.cpp");
}

}  // namespace sf::exercise
