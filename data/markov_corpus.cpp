// markov_corpus.cpp: building the random chain, its stationary distribution and entropy rate.
#include "data/markov_corpus.h"

#include <algorithm>
#include <cmath>

#include "autograd/errors.h"
#include "data/utf8.h"

namespace sf::data {

static void validate(const MarkovConfig& c, int64_t k) {
  auto fail = [](const std::string& key, const std::string& why) {
    throw ConfigError("data.markov." + key + ": " + why);
  };
  if (k < 2 || k > 256) fail("alphabet", "needs 2 to 256 distinct symbols, got " + std::to_string(k));
  if (c.order != 1 && c.order != 2) fail("order", "must be 1 or 2, got " + std::to_string(c.order));
  if (c.min_successors < 1 || c.min_successors > c.max_successors || c.max_successors > k)
    fail("min_successors", "need 1 <= min_successors <= max_successors <= alphabet size (" +
                               std::to_string(c.min_successors) + ", " + std::to_string(c.max_successors) + ")");
  if (!(c.smoothing > 0.0 && c.smoothing < 1.0))
    fail("smoothing", "must be in (0, 1), got " + std::to_string(c.smoothing));
  if (c.train_tokens < 2) fail("train_tokens", "must be >= 2, got " + std::to_string(c.train_tokens));
  if (c.val_tokens < 0) fail("val_tokens", "must be >= 0, got " + std::to_string(c.val_tokens));
}

MarkovSource::MarkovSource(const MarkovConfig& cfg) : order_(cfg.order), alphabet_(cfg.alphabet) {
  std::vector<char32_t> symbols = utf8_decode(cfg.alphabet, "data.markov.alphabet");
  k_ = static_cast<int64_t>(symbols.size());
  validate(cfg, k_);
  std::vector<char32_t> sorted = symbols;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw ConfigError("data.markov.alphabet: symbols must be distinct");
  n_ctx_ = order_ == 1 ? k_ : k_ * k_;
  const int64_t space = symbols[0] == U' ' ? 0 : -1;  // word-like text when space is symbol 0

  // 1. transition table: a few successors per context with skewed random weights
  Generator gen(cfg.seed);
  p_.assign(static_cast<size_t>(n_ctx_ * k_), 0.0);
  std::vector<int64_t> perm(static_cast<size_t>(k_));
  for (int64_t ctx = 0; ctx < n_ctx_; ++ctx) {
    int64_t last = ctx % k_;  // the most recent symbol
    int64_t m = cfg.min_successors + gen.randint(cfg.max_successors - cfg.min_successors + 1);
    for (int64_t i = 0; i < k_; ++i) perm[i] = i;
    for (int64_t i = 0; i < k_; ++i) std::swap(perm[i], perm[i + gen.randint(k_ - i)]);  // shuffle
    std::vector<double> w(static_cast<size_t>(k_), 0.0);
    int64_t chosen = 0;
    if (space >= 0 && last != space) {
      w[space] = 1.0;
      ++chosen;
    }  // a word can always end
    for (int64_t i = 0; i < k_ && chosen < m; ++i) {
      int64_t c = perm[i];
      if (c == space) continue;                   // space only where it was put above
      double e = -std::log(1.0 - gen.uniform());  // Exp(1); squared for skew
      w[c] = e * e;
      ++chosen;
    }
    double total = 0;
    for (double x : w) total += x;
    for (int64_t c = 0; c < k_; ++c)
      p_[ctx * k_ + c] = (1.0 - cfg.smoothing) * w[c] / total + cfg.smoothing / double(k_);
  }
  cdf_.resize(p_.size());
  for (int64_t ctx = 0; ctx < n_ctx_; ++ctx) {
    double run = 0;
    for (int64_t c = 0; c < k_; ++c) cdf_[ctx * k_ + c] = (run += p_[ctx * k_ + c]);
  }

  // 2. stationary distribution: pi <- pi P until it stops changing
  pi_.assign(static_cast<size_t>(n_ctx_), 1.0 / double(n_ctx_));
  std::vector<double> next(pi_.size());
  for (int iter = 0; iter < 100000; ++iter) {
    std::fill(next.begin(), next.end(), 0.0);
    for (int64_t ctx = 0; ctx < n_ctx_; ++ctx)
      for (int64_t c = 0; c < k_; ++c) next[(ctx * k_ + c) % n_ctx_] += pi_[ctx] * p_[ctx * k_ + c];
    double change = 0, total = 0;
    for (size_t i = 0; i < next.size(); ++i) {
      change += std::abs(next[i] - pi_[i]);
      total += next[i];
    }
    for (size_t i = 0; i < next.size(); ++i) pi_[i] = next[i] / total;
    if (change < 1e-15) break;
  }

  // 3. entropy rate: the stationary average of each context's next-symbol entropy
  for (int64_t ctx = 0; ctx < n_ctx_; ++ctx) {
    double h = 0;
    for (int64_t c = 0; c < k_; ++c) h -= p_[ctx * k_ + c] * std::log(p_[ctx * k_ + c]);
    entropy_rate_ += pi_[ctx] * h;
  }
}

double MarkovSource::entropy_given(int64_t n) const {
  if (n >= order_) return entropy_rate_;
  if (n < 0) throw ConfigError("entropy_given: context length must be >= 0");
  if (order_ == 1) {  // n = 0: the entropy of the stationary distribution itself
    double h = 0;
    for (double p : pi_)
      if (p > 0) h -= p * std::log(p);
    return h;
  }
  // Order 2, n = 0 or 1: pi is the joint law of two consecutive symbols.
  double h_pair = 0, h_single = 0;
  std::vector<double> marginal(static_cast<size_t>(k_), 0.0);
  for (int64_t ctx = 0; ctx < n_ctx_; ++ctx) {
    if (pi_[ctx] > 0) h_pair -= pi_[ctx] * std::log(pi_[ctx]);
    marginal[ctx / k_] += pi_[ctx];
  }
  for (double m : marginal)
    if (m > 0) h_single -= m * std::log(m);
  return n == 0 ? h_single : h_pair - h_single;  // H(X1 | X0) = H(X0, X1) - H(X0)
}

double MarkovSource::window_loss_floor(int64_t block_size) const {
  if (order_ == 1 || block_size < 1) return entropy_rate_;
  // Order 2: a window's first target is predicted from one symbol, the rest from two or more.
  return (entropy_given(1) + double(block_size - 1) * entropy_rate_) / double(block_size);
}

std::vector<int32_t> MarkovSource::generate(int64_t n, Generator& gen) const {
  if (n < 0) throw ConfigError("MarkovSource::generate: token count must be >= 0, got " + std::to_string(n));
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(n) + 2);
  // first context from the stationary distribution
  double u = gen.uniform(), run = 0;
  int64_t ctx = n_ctx_ - 1;
  for (int64_t i = 0; i < n_ctx_; ++i) {
    run += pi_[i];
    if (u < run) {
      ctx = i;
      break;
    }
  }
  if (order_ == 2) out.push_back(static_cast<int32_t>(ctx / k_));
  out.push_back(static_cast<int32_t>(ctx % k_));
  while (static_cast<int64_t>(out.size()) < n) {
    const double* row = cdf_.data() + ctx * k_;
    double v = gen.uniform() * row[k_ - 1];
    int64_t c = std::upper_bound(row, row + k_, v) - row;
    if (c >= k_) c = k_ - 1;
    out.push_back(static_cast<int32_t>(c));
    ctx = (ctx * k_ + c) % n_ctx_;
  }
  out.resize(static_cast<size_t>(n));
  return out;
}

CharTokenizer MarkovSource::tokenizer() const {
  return CharTokenizer(utf8_decode(alphabet_, "data.markov.alphabet"), false);
}

LmData markov_lm_data(const MarkovConfig& cfg) {
  MarkovSource src(cfg);
  Generator train_gen(cfg.seed + 1), val_gen(cfg.seed + 2);
  LmData d;
  d.train = std::make_shared<const std::vector<int32_t>>(src.generate(cfg.train_tokens, train_gen));
  d.val = std::make_shared<const std::vector<int32_t>>(src.generate(cfg.val_tokens, val_gen));
  d.tokenizer = std::make_shared<CharTokenizer>(src.tokenizer());
  d.entropy_floor = src.entropy_rate();
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.4f", src.entropy_rate());
  d.description = "synthetic Markov corpus (order " + std::to_string(cfg.order) + ", " +
                  std::to_string(src.num_symbols()) + " symbols, seed " + std::to_string(cfg.seed) +
                  "): " + std::to_string(cfg.train_tokens) + " train / " + std::to_string(cfg.val_tokens) +
                  " val tokens, entropy rate " + rate + " nats/token";
  return d;
}

}  // namespace sf::data
