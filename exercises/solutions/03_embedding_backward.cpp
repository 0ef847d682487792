// Reference solution of exercise 3 (spoiler): the embedding's backward, a scatter-add.
#include "exercises/exercise.h"

namespace sf::exercise {

Tensor embedding_backward(const IntTensor& ids, const Tensor& dout, int64_t V) {
  const int64_t C = dout.size(-1);
  if (dout.numel() != ids.numel() * C)
    throw ShapeError("embedding_backward: dout " + shape_str(dout.shape()) + " does not match the ids");
  const std::vector<double> d = dout.to_vector();  // (N, C) flattened
  std::vector<double> dW(static_cast<size_t>(V * C), 0.0);
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= V) throw ShapeError("embedding_backward: id " + std::to_string(id) + " outside [0, V)");
    for (int64_t c = 0; c < C; ++c) dW[id * C + c] += d[i * C + c];  // +=: repeated ids sum
  }
  return Tensor::from_vector(dW, {V, C}, dout.dtype());
}

}  // namespace sf::exercise
