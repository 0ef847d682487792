// Exercise 28 (lesson 22 windows): the mask of local (sliding-window) attention.
//
// Mistral and Longformer let each query see only the last W keys up to itself: the cost of a
// row stops growing with T, and information still travels further through the layers.
//
//   shapes:  T queries, S keys (S >= T), window W >= 1 -> mask (T, S), float64
//   contract: query t sits at position p = S - T + t (the last T of the S keys, as with a KV
//            cache); mask[t, s] = 0 when key s is visible (the last W keys up to and including
//            position p), 1 otherwise; W >= S gives the plain causal mask; W < 1 or S < T throws
//            sf::ShapeError.
//
// Stuck? scratchformer exercise hint 28 (1 the idea, 2 the formula, 3 the code).
// Check it: scratchformer exercise check 28   (or ./run.sh exercise 28)
// 中文说明：exercises/zh/28_sliding_window_mask.md（或 scratchformer exercise show 28 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor sliding_window_mask(int64_t T, int64_t S, int64_t W) {
  // TODO: return the (T, S) mask, 1 = hidden.
  todo("sliding_window_mask in exercises/28_sliding_window_mask.cpp");
}

}  // namespace sf::exercise
