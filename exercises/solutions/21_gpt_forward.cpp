// Reference solution of exercise 21 (spoiler): the GPT forward, logits and loss.
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

GPTOutput gpt_forward(const GPT& model, const IntTensor& idx, const IntTensor* targets, GPTCache* cache) {
  if (idx.shape.size() != 2) throw ShapeError("gpt_forward: idx must be (B, T)");
  const int64_t B = idx.shape[0], T = idx.shape[1], V = model.config().vocab_size;
  const size_t L = model.h.size();
  const int64_t offset = cache != nullptr ? cache->length() : 0;
  if (offset + T > model.config().block_size)
    throw ShapeError("gpt_forward: positions up to " + std::to_string(offset + T) + " exceed block_size " +
                     std::to_string(model.config().block_size));
  std::vector<int32_t> pos(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) pos[static_cast<size_t>(t)] = static_cast<int32_t>(offset + t);
  Tensor x =
      your_embedding(model.wte.weight, idx) + your_embedding(model.wpe->weight, IntTensor({T}, pos));  // (B, T, C)
  if (cache != nullptr && cache->layers.size() != L) cache->layers.assign(L, KVCache{});
  for (size_t i = 0; i < L; ++i) x = transformer_block(model.h[i], x, cache != nullptr ? &cache->layers[i] : nullptr);
  x = your_layer_norm(x, model.ln_f->weight, model.ln_f->bias, model.ln_f->eps);
  GPTOutput out;
  out.logits = linear(x, model.lm_head->weight);  // (B, T, V); with a tied head this is wte.weight
  if (targets != nullptr) {
    IntTensor flat({B * T}, targets->data);
    out.loss = your_cross_entropy(reshape(out.logits, {B * T, V}), flat);
  }
  return out;
}

}  // namespace sf::exercise
