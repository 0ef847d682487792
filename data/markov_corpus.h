// markov_corpus.h: the built-in language-modelling corpus, text from a fixed random Markov
// source, generated from a seed with no files, whose entropy rate is known exactly.
//
// The source: an order-k chain (k = 1 or 2) over a small alphabet (default: space and a-z).
// For each context (the last k symbols) a few successors are allowed (min..max_successors of
// them, chosen at random) with random skewed weights; after a letter, space is always among
// them and after a space, space is not, so the text falls into word-like runs. A little
// uniform smoothing keeps every transition possible (the chain is irreducible and aperiodic):
//   P(c | ctx) = (1 - smoothing) * w[ctx][c] / sum_c' w[ctx][c'] + smoothing / K
// The same seed always gives the same chain and the same text.
//
// Entropy rate (nats/token), the lowest expected loss any model can reach on this text:
//   h = sum_ctx pi(ctx) * H(P(. | ctx)),   H(p) = -sum_c p_c ln p_c,
// with pi the stationary distribution over contexts, found by power iteration to 1e-15.
// A model that sees only a window cannot use the context before it: with order 2 the first
// target of a window is predicted from one symbol, so window_loss_floor(T) is slightly above h.
#pragma once
#include <string>
#include <vector>

#include "autograd/tensor.h"
#include "data/char_tokenizer.h"
#include "data/lm_batches.h"

namespace sf::data {

struct MarkovConfig {
  std::string alphabet = " abcdefghijklmnopqrstuvwxyz";  // symbols in id order, distinct
  int64_t order = 2;                                     // 1 or 2 symbols of context
  int64_t min_successors = 3;                            // allowed next symbols per context (before smoothing)
  int64_t max_successors = 8;
  double smoothing = 0.01;  // uniform probability mass mixed into every row, in (0, 1)
  uint64_t seed = 1234;     // the source itself (its transition table)
  int64_t train_tokens = 200000;
  int64_t val_tokens = 20000;
};

class MarkovSource {
 public:
  explicit MarkovSource(const MarkovConfig& cfg);  // ConfigError naming the key when invalid

  int64_t num_symbols() const { return k_; }
  int64_t order() const { return order_; }
  int64_t num_contexts() const { return n_ctx_; }
  // P(next = c | context), context = the last `order` symbols as a base-K number.
  double prob(int64_t context, int64_t c) const { return p_[context * k_ + c]; }
  const std::vector<double>& stationary() const { return pi_; }  // over contexts

  double entropy_rate() const { return entropy_rate_; }  // nats/token, exact
  // H(X_n | the n previous symbols) under the stationary chain, in nats: n = 0 is the unigram
  // entropy (what a model without context can reach), n = 1 the bigram one, n >= order the rate.
  double entropy_given(int64_t n) const;
  // The best mean loss over the T targets of one window (inputs t0..t_{T-1}), >= entropy_rate.
  double window_loss_floor(int64_t block_size) const;

  // n symbols of the stationary chain: the first context is drawn from pi, then each symbol
  // from P(. | last `order` symbols).
  std::vector<int32_t> generate(int64_t n, Generator& gen) const;
  CharTokenizer tokenizer() const;  // the alphabet, ids in alphabet order

 private:
  int64_t k_, order_, n_ctx_;
  std::vector<double> p_;    // (n_ctx, K) transition probabilities
  std::vector<double> cdf_;  // (n_ctx, K) running sums, for sampling
  std::vector<double> pi_;   // (n_ctx) stationary distribution
  double entropy_rate_ = 0;
  std::string alphabet_;
};

// With the defaults (seed 1234): entropy rate 1.1202 nats/token; a bigram model can reach
// entropy_given(1) and a unigram model entropy_given(0) (printed by the tests).

// The built-in corpus as LM data: train and val texts drawn from the same source with two
// different sampling seeds (cfg.seed + 1 and cfg.seed + 2), entropy_floor = entropy_rate().
LmData markov_lm_data(const MarkovConfig& cfg);

}  // namespace sf::data
