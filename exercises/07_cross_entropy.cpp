// Exercise 7 (lesson 5 attention; the loss every lesson after it trains with): cross-entropy
// from a stable log-softmax, forward and backward.
//
// A language model's loss: for each row of logits (one per token), minus the log-probability
// softmax gives the right next token, averaged over the rows.
//
//   shapes:  logits (N, V), targets (N) with values in [0, V) -> loss () (a scalar tensor);
//            backward: the same logits and targets and dloss () -> dlogits (N, V)
//   idea:    take the log of softmax on paper (a log of a quotient), never numerically; then
//            differentiate -log softmax with respect to every logit.
//   contract: the loss and the gradient keep the logits' dtype (a float32 model stays float32);
//            the gradient is scaled by dloss (the gradient arriving from above); a target outside
//            [0, V) throws sf::ShapeError, in the forward and the backward.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 7 (1 the idea), then
// hint 7 2 (the formula) and hint 7 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 7   (or ./run.sh exercise 7)
// 中文说明：exercises/zh/07_cross_entropy.md（或 scratchformer exercise show 7 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor cross_entropy_forward(const Tensor& logits, const IntTensor& targets) {
  // TODO: return the mean cross-entropy, shape ().
  todo("cross_entropy_forward in exercises/07_cross_entropy.cpp");
}

Tensor cross_entropy_backward(const Tensor& logits, const IntTensor& targets, const Tensor& dloss) {
  // TODO: return d loss / d logits (N, V).
  todo("cross_entropy_backward in exercises/07_cross_entropy.cpp");
}

}  // namespace sf::exercise
