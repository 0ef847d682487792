// Exercise 31 (lesson 17 scaling-out): gradient accumulation, exactly equal to the big batch.
//
// When a batch does not fit, run it as micro-batches one after another and combine their
// gradients before the update. Each micro-batch's backward gives the gradient of its own mean
// loss. Combine them so that the result is the gradient of the mean loss over all the rows,
// exactly as one big batch gives it, also when the micro-batches have different sizes (the last
// one of an epoch, or windows that do not divide evenly).
//
//   input:   micro_grads[k], the gradient of micro-batch k's mean loss (every one the same size);
//            rows[k] >= 1, the number of rows (examples) micro-batch k averaged over
//   returns: the gradient of the mean loss over all sum_k rows[k] rows
//   contract: as many row counts as gradients, at least one, gradients of one size, rows >= 1;
//            else sf::ShapeError.
//
// Stuck? scratchformer exercise hint 31 (1 the idea, 2 the formula, 3 the code).
// Check it: scratchformer exercise check 31   (or ./run.sh exercise 31)
// 中文说明：exercises/zh/31_grad_accumulation.md（或 scratchformer exercise show 31 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

std::vector<double> accumulate_gradients(const std::vector<std::vector<double>>& micro_grads,
                                         const std::vector<int64_t>& rows) {
  // TODO: return the big batch's gradient.
  todo("accumulate_gradients in exercises/31_grad_accumulation.cpp");
}

}  // namespace sf::exercise
