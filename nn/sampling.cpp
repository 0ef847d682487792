// sampling.cpp: temperature, top-k and top-p (nucleus) sampling with the KV cache.
#include "experiments/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/errors.h"

namespace sf {

int32_t sample_from_logits(const float* logits, int64_t V, const SampleOptions& o, Generator& gen) {
  if (o.temperature <= 0) return static_cast<int32_t>(std::max_element(logits, logits + V) - logits);
  // Candidates sorted by logit, most likely first (ties by index, so the draw is deterministic).
  std::vector<int32_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  size_t keep = order.size();
  if (o.top_k > 0) keep = std::min(keep, static_cast<size_t>(o.top_k));
  // p_i = e^((z_i - z_max) / temperature) / sum
  std::vector<double> p(keep);
  double zmax = logits[order[0]], total = 0;
  for (size_t i = 0; i < keep; ++i) total += (p[i] = std::exp((logits[order[i]] - zmax) / o.temperature));
  if (o.top_p < 1.0) {  // smallest prefix whose probability reaches top_p
    double mass = 0;
    size_t n = 0;
    while (n < keep && mass < o.top_p * total) mass += p[n++];
    keep = std::max<size_t>(n, 1);
    total = 0;
    for (size_t i = 0; i < keep; ++i) total += p[i];
  }
  double r = gen.uniform() * total;
  for (size_t i = 0; i < keep; ++i) {
    r -= p[i];
    if (r < 0) return order[i];
  }
  return order[keep - 1];
}

std::vector<int32_t> sample_gpt(GPT& model, std::vector<int32_t> seq, const SampleOptions& o, Generator& gen,
                                const std::function<bool(int32_t)>& on_token) {
  if (seq.empty()) throw ConfigError("sample: the prompt must hold at least one token");
  const int64_t V = model.config().vocab_size, block = model.config().block_size;
  bool was_training = model.training();
  model.eval();
  NoGradGuard no_grad;
  GPTCache cache;
  // What the model reads next: the whole (cropped) context after a reset, else one token.
  std::vector<int32_t> next;
  auto feed_context = [&] {
    size_t T = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(seq.size()), block));
    next.assign(seq.end() - static_cast<std::ptrdiff_t>(T), seq.end());
    cache.clear();
  };
  feed_context();
  for (int64_t i = 0; i < o.max_new_tokens; ++i) {
    const int64_t T = static_cast<int64_t>(next.size());
    Tensor logits = model.forward(IntTensor({1, T}, next), cache);  // (1, T, V)
    int32_t token = sample_from_logits(logits.data<float>() + (T - 1) * V, V, o, gen);
    seq.push_back(token);
    if (on_token && !on_token(token)) break;  // the caller has what it wants (or was interrupted)
    next = {token};
    if (cache.length() + 1 > block) feed_context();  // slide the window: recompute the cache
  }
  model.train(was_training);  // (also reached after an early stop)
  return seq;
}

}  // namespace sf
