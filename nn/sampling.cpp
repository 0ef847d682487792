// sampling.cpp: temperature, top-k and top-p (nucleus) sampling with the KV cache.
#include "nn/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/errors.h"

namespace sf {

template <class T>
static int32_t draw(const T* logits, int64_t V, const SampleOptions& o, Generator& gen) {
  if (o.temperature <= 0) return static_cast<int32_t>(std::max_element(logits, logits + V) - logits);
  // Candidates sorted by logit, most likely first (ties by index, so the draw is deterministic).
  std::vector<int32_t> order(static_cast<size_t>(V));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
  size_t keep = order.size();
  if (o.top_k > 0) keep = std::min(keep, static_cast<size_t>(o.top_k));
  // p_i = e^((z_i - z_max) / temperature) / sum
  std::vector<double> p(keep);
  double zmax = static_cast<double>(logits[order[0]]), total = 0;
  for (size_t i = 0; i < keep; ++i)
    total += (p[i] = std::exp((static_cast<double>(logits[order[i]]) - zmax) / o.temperature));
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

int32_t sample_from_logits(const float* logits, int64_t V, const SampleOptions& o, Generator& gen) {
  return draw(logits, V, o, gen);
}
int32_t sample_from_logits(const double* logits, int64_t V, const SampleOptions& o, Generator& gen) {
  return draw(logits, V, o, gen);
}

std::vector<std::vector<int32_t>> sample_rows(GPT& model, std::vector<std::vector<int32_t>> seqs,
                                              const SampleOptions& o, Generator& gen,
                                              const std::function<bool(int32_t)>& on_token) {
  if (seqs.empty() || seqs[0].empty()) throw ConfigError("sample: the prompt must hold at least one token");
  for (const auto& s : seqs)
    if (s.size() != seqs[0].size()) throw ShapeError("sample: every prompt row must have the same length");
  const int64_t B = static_cast<int64_t>(seqs.size());
  const int64_t V = model.config().vocab_size, block = model.config().block_size;
  bool was_training = model.training();
  model.eval();
  NoGradGuard no_grad;
  GPTCache cache;
  // What the model reads next: the whole (cropped) context after a reset, else one token a row.
  std::vector<int32_t> next;
  int64_t T = 0;
  auto feed_context = [&] {
    T = std::min<int64_t>(static_cast<int64_t>(seqs[0].size()), block);
    next.clear();
    for (const auto& s : seqs) next.insert(next.end(), s.end() - T, s.end());
    cache.clear();
  };
  feed_context();
  for (int64_t i = 0; i < o.max_new_tokens; ++i) {
    Tensor logits = model.forward(IntTensor({B, T}, next), cache);  // (B, T, V)
    next.clear();
    bool go_on = true;
    dispatch(logits.dtype(), [&](auto tag) {
      using F = decltype(tag);
      for (int64_t b = 0; b < B; ++b) {
        int32_t token = sample_from_logits(logits.data<F>() + (b * T + T - 1) * V, V, o, gen);
        seqs[static_cast<size_t>(b)].push_back(token);
        next.push_back(token);
        if (B == 1 && on_token && !on_token(token)) go_on = false;
      }
    });
    if (!go_on) break;  // the caller has what it wants (or was interrupted)
    T = 1;
    if (cache.length() + 1 > block) feed_context();  // slide the window: recompute the cache
  }
  model.train(was_training);  // (also reached after an early stop)
  return seqs;
}

std::vector<int32_t> sample_gpt(GPT& model, std::vector<int32_t> prompt, const SampleOptions& o, Generator& gen,
                                const std::function<bool(int32_t)>& on_token) {
  return sample_rows(model, {std::move(prompt)}, o, gen, on_token).front();
}

}  // namespace sf
