// sampling.cpp: temperature, top-k and top-p (nucleus) sampling with the KV cache.
#include "nn/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/errors.h"

namespace sf {

namespace {

// Where a UTF-8 byte stream stands: how many continuation bytes the open character still needs,
// and the range the next one must fall in (RFC 3629: no overlong forms, no surrogates, nothing
// past U+10FFFF; the decoder that prints the text replaces exactly these violations by U+FFFD).
struct Utf8State {
  int need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
};

// Feeds byte b; false (the state unchanged) when b cannot come next in valid UTF-8.
bool utf8_step(Utf8State& s, unsigned char b) {
  if (s.need > 0) {
    if (b < s.lo || b > s.hi) return false;
    s = Utf8State{s.need - 1, 0x80, 0xBF};
    return true;
  }
  if (b < 0x80) return true;     // ASCII
  if (b >= 0xC2 && b <= 0xDF) {  // 2 bytes: U+0080..U+07FF
    s = {1, 0x80, 0xBF};
    return true;
  }
  if (b >= 0xE0 && b <= 0xEF) {  // 3 bytes: U+0800..U+FFFF (CJK)
    s = {2, static_cast<unsigned char>(b == 0xE0 ? 0xA0 : 0x80), static_cast<unsigned char>(b == 0xED ? 0x9F : 0xBF)};
    return true;
  }
  if (b >= 0xF0 && b <= 0xF4) {  // 4 bytes: U+10000..U+10FFFF
    s = {3, static_cast<unsigned char>(b == 0xF0 ? 0x90 : 0x80), static_cast<unsigned char>(b == 0xF4 ? 0x8F : 0xBF)};
    return true;
  }
  return false;  // a continuation byte with no lead, or a byte UTF-8 never uses
}

// The state after `bytes`, restarting at a byte that breaks the sequence (for a prompt).
void utf8_feed(Utf8State& s, const std::string& bytes) {
  for (char c : bytes)
    if (!utf8_step(s, static_cast<unsigned char>(c))) {
      s = Utf8State{};
      utf8_step(s, static_cast<unsigned char>(c));
    }
}

// Whether a token's bytes can come next from state s. When `finish`, they must also all be
// continuation bytes of the open character (so the sample ends on a boundary, nothing new begun).
bool token_fits(Utf8State s, const std::string& bytes, bool finish) {
  if (finish && bytes.empty()) return false;
  for (char c : bytes) {
    if (finish && s.need == 0) return false;
    if (!utf8_step(s, static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// allowed[id] for every token of the vocabulary from state s.
std::vector<char> allowed_tokens(const std::vector<std::string>& token_bytes, const Utf8State& s, bool finish) {
  std::vector<char> allowed(token_bytes.size());
  for (size_t id = 0; id < token_bytes.size(); ++id) allowed[id] = token_fits(s, token_bytes[id], finish);
  return allowed;
}

// One draw from a row of logits; `allowed` (V flags, or empty for all) leaves tokens out before
// top_k and top_p, so the probabilities are renormalised over the allowed ones. When no token is
// allowed, all are (a vocabulary without the bytes to continue: nothing better can be done).
template <class T>
int32_t draw(const T* logits, int64_t V, const SampleOptions& o, Generator& gen, const std::vector<char>& allowed) {
  std::vector<int32_t> order;
  order.reserve(static_cast<size_t>(V));
  for (int32_t id = 0; id < V; ++id)
    if (allowed.empty() || allowed[static_cast<size_t>(id)]) order.push_back(id);
  if (order.empty()) {
    order.resize(static_cast<size_t>(V));
    std::iota(order.begin(), order.end(), 0);
  }
  if (o.temperature <= 0)
    return *std::max_element(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[a] < logits[b]; });
  // Candidates sorted by logit, most likely first (ties by index, so the draw is deterministic).
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

}  // namespace

int32_t sample_from_logits(const float* logits, int64_t V, const SampleOptions& o, Generator& gen) {
  return draw(logits, V, o, gen, {});
}
int32_t sample_from_logits(const double* logits, int64_t V, const SampleOptions& o, Generator& gen) {
  return draw(logits, V, o, gen, {});
}

std::vector<std::vector<int32_t>> sample_rows(GPT& model, std::vector<std::vector<int32_t>> seqs,
                                              const SampleOptions& o, Generator& gen,
                                              const std::function<bool(int32_t)>& on_token) {
  if (seqs.empty() || seqs[0].empty()) throw ConfigError("sample: the prompt must hold at least one token");
  for (const auto& s : seqs)
    if (s.size() != seqs[0].size()) throw ShapeError("sample: every prompt row must have the same length");
  const int64_t B = static_cast<int64_t>(seqs.size());
  const int64_t V = model.config().vocab_size, block = model.config().block_size;
  const std::vector<std::string>* token_bytes = o.whole_characters ? o.token_bytes.get() : nullptr;
  if (token_bytes && static_cast<int64_t>(token_bytes->size()) != V)
    throw ConfigError("sample: token_bytes holds " + std::to_string(token_bytes->size()) +
                      " tokens, but the model's vocabulary has " + std::to_string(V));
  // Each row's place in its UTF-8 byte stream, from its prompt on.
  std::vector<Utf8State> utf8(static_cast<size_t>(B));
  if (token_bytes)
    for (int64_t b = 0; b < B; ++b)
      for (int32_t t : seqs[static_cast<size_t>(b)]) {
        if (t < 0 || t >= V)
          throw ConfigError("sample: prompt token " + std::to_string(t) + " is outside the vocabulary");
        utf8_feed(utf8[static_cast<size_t>(b)], (*token_bytes)[static_cast<size_t>(t)]);
      }
  bool was_training = model.training();
  model.eval();
  NoGradGuard no_grad;
  GPTCache cache;
  // What the model reads next: the whole (cropped) context after a reset, else one token a row.
  std::vector<int32_t> next;
  int64_t T = 0;
  auto feed_context = [&] {
    T = block;  // rows finishing a character may be a few tokens longer than the others
    for (const auto& s : seqs) T = std::min<int64_t>(T, static_cast<int64_t>(s.size()));
    next.clear();
    for (const auto& s : seqs) next.insert(next.end(), s.end() - T, s.end());
    cache.clear();
  };
  feed_context();
  // Past max_new_tokens, rows that stopped inside a character draw its missing continuation
  // bytes (at most 3 tokens, each one at least a byte); the other rows wait.
  auto open_character = [&](int64_t b) { return token_bytes && utf8[static_cast<size_t>(b)].need > 0; };
  for (int64_t i = 0; i < o.max_new_tokens + 3; ++i) {
    const bool finishing = i >= o.max_new_tokens;
    bool any_open = false;
    for (int64_t b = 0; b < B; ++b) any_open = any_open || open_character(b);
    if (finishing && (o.max_new_tokens == 0 || !any_open)) break;
    Tensor logits = model.forward(IntTensor({B, T}, next), cache);  // (B, T, V)
    std::vector<int32_t> fed = next;
    next.clear();
    bool go_on = true;
    dispatch(logits.dtype(), [&](auto tag) {
      using F = decltype(tag);
      for (int64_t b = 0; b < B; ++b) {
        if (finishing && !open_character(b)) {  // done: read its last token again, keep nothing
          next.push_back(fed[static_cast<size_t>(b * T + T - 1)]);
          continue;
        }
        std::vector<char> allowed;
        if (token_bytes) allowed = allowed_tokens(*token_bytes, utf8[static_cast<size_t>(b)], finishing);
        int32_t token = draw(logits.data<F>() + (b * T + T - 1) * V, V, o, gen, allowed);
        if (token_bytes) utf8_feed(utf8[static_cast<size_t>(b)], (*token_bytes)[static_cast<size_t>(token)]);
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
