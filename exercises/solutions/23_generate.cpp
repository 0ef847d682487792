// Reference solution of exercise 23 (spoiler): sampling and generate() with the KV cache.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "exercises/exercise.h"

namespace sf::exercise {

int64_t sample_token(const std::vector<double>& logits, const SamplingConfig& s, Generator& gen) {
  if (logits.empty()) throw ShapeError("sample_token: no logits");
  if (s.temperature <= 0) return std::max_element(logits.begin(), logits.end()) - logits.begin();
  std::vector<int64_t> order(logits.size());  // most likely first, ties by index
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  size_t keep = order.size();
  if (s.top_k > 0) keep = std::min(keep, static_cast<size_t>(s.top_k));
  std::vector<double> p(keep);  // e^((z - z_max) / temperature), not yet normalised
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += (p[i] = std::exp((logits[order[i]] - logits[order[0]]) / s.temperature));
  if (s.top_p < 1.0) {
    double mass = 0;
    size_t n = 0;
    while (n < keep && mass < s.top_p * total) mass += p[n++];
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

std::vector<int32_t> generate(const GPT& model, const std::vector<int32_t>& prompt, int64_t max_new_tokens,
                              const SamplingConfig& s, Generator& gen, GPTCache& cache) {
  if (prompt.empty()) throw ShapeError("generate: the prompt must hold at least one token");
  NoGradGuard no_grad;
  const int64_t block = model.config().block_size, V = model.config().vocab_size;
  std::vector<int32_t> seq = prompt;
  // what the model reads next: the last block tokens after a (re)start, else the newest token
  auto context = [&] {
    cache.clear();
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(seq.size()), block);
    return std::vector<int32_t>(seq.end() - n, seq.end());
  };
  std::vector<int32_t> next = context();
  for (int64_t i = 0; i < max_new_tokens; ++i) {
    const int64_t T = static_cast<int64_t>(next.size());
    Tensor logits = gpt_forward(model, IntTensor({1, T}, next), nullptr, &cache).logits;  // (1, T, V)
    std::vector<double> all = logits.to_vector();
    std::vector<double> last(all.end() - V, all.end());
    const int32_t token = static_cast<int32_t>(sample_token(last, s, gen));
    seq.push_back(token);
    next = {token};
    if (cache.length() + 1 > block) next = context();  // full: slide the window, rebuild the cache
  }
  return seq;
}

}  // namespace sf::exercise
