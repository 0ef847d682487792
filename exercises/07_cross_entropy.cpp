// Exercise 7 (lesson 5, attention; the loss every lesson after it trains with): cross-entropy
// from a stable log-softmax, forward and backward.
//
// A language model's loss: for each row of logits (one per token), minus the log-probability
// softmax gives the right next token, averaged over the rows.
//
//   shapes:  logits (N, V), targets (N) with values in [0, V) -> loss () (a scalar tensor);
//            backward: the same logits and targets and dloss () -> dlogits (N, V)
//   formula: log_softmax(x)_j = (x_j - m) - log(sum_k e^(x_k - m)),  m = max_k x_k per row
//            loss = -(1/N) sum_n log_softmax(logits_n)[targets[n]]
//            d loss / d logits = (softmax(logits) - onehot(targets)) / N, times dloss
//   hint:    build onehot (N, V) with 1 at (n, targets[n]) (a std::vector<double> and
//            Tensor::from_vector(values, {N, V}, logits.dtype())); then the loss is
//            -sum(logp * onehot) / N. dloss.item() is the scalar to scale the gradient by.
//            log(softmax(x)) is not stable: softmax underflows to 0 for large logits, and
//            log 0 = -inf. The log-sum-exp form above never takes the log of something tiny.
//
// Check it: scratchformer exercise check 7   (or ./run.sh exercise 7)
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
