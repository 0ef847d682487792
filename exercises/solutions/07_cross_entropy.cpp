// Reference solution of exercise 7 (spoiler): cross-entropy from a stable log-softmax.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

// onehot (N, V): 1 at (n, targets[n]).
static Tensor one_hot(const IntTensor& targets, int64_t N, int64_t V, DType dtype) {
  if (targets.numel() != N)
    throw ShapeError("cross_entropy: " + std::to_string(targets.numel()) + " targets for " + std::to_string(N) +
                     " rows");
  std::vector<double> h(static_cast<size_t>(N * V), 0.0);
  for (int64_t n = 0; n < N; ++n) {
    if (targets[n] < 0 || targets[n] >= V)
      throw ShapeError("cross_entropy: target " + std::to_string(targets[n]) + " outside [0, V)");
    h[n * V + targets[n]] = 1.0;
  }
  return Tensor::from_vector(h, {N, V}, dtype);
}

static Tensor log_softmax_rows(const Tensor& x) {
  Tensor z = x - max(x, -1, /*keepdim=*/true);  // (N, V), max 0 per row
  return z - log(sum(exp(z), {-1}, /*keepdim=*/true));
}

Tensor cross_entropy_forward(const Tensor& logits, const IntTensor& targets) {
  const int64_t N = logits.size(0), V = logits.size(1);
  Tensor onehot = one_hot(targets, N, V, logits.dtype());
  return -sum(log_softmax_rows(logits) * onehot) / static_cast<double>(N);
}

Tensor cross_entropy_backward(const Tensor& logits, const IntTensor& targets, const Tensor& dloss) {
  const int64_t N = logits.size(0), V = logits.size(1);
  Tensor p = exp(log_softmax_rows(logits));  // softmax
  return (p - one_hot(targets, N, V, logits.dtype())) * (dloss.item() / static_cast<double>(N));
}

}  // namespace sf::exercise
