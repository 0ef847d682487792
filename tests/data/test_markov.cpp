// The built-in Markov corpus: determinism, a valid chain, and an entropy rate that matches the
// average log-loss of the true model on generated text.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/errors.h"
#include "data/markov_corpus.h"
#include "test_helpers.h"

using namespace sf;
using namespace sf::data;
using sf::test::contains;
using sf::test::error_of;

TEST_CASE("markov: same seed gives the same text and another seed another language") {
  MarkovConfig cfg;
  MarkovSource a(cfg), b(cfg);
  Generator g1(9), g2(9);
  CHECK(a.generate(1000, g1) == b.generate(1000, g2));
  CHECK(a.entropy_rate() == b.entropy_rate());
  MarkovConfig other = cfg;
  other.seed = 99;
  CHECK(MarkovSource(other).entropy_rate() != a.entropy_rate());
  LmData d1 = markov_lm_data(cfg), d2 = markov_lm_data(cfg);
  CHECK(*d1.train == *d2.train);
  CHECK(*d1.train != *d1.val);  // train and val come from different sampling seeds
  CHECK(static_cast<int64_t>(d1.train->size()) == cfg.train_tokens);
  CHECK(static_cast<int64_t>(d1.val->size()) == cfg.val_tokens);
  CHECK(d1.entropy_floor == a.entropy_rate());
  std::string text = d1.tokenizer->decode(std::vector<int32_t>(d1.train->begin(), d1.train->begin() + 200));
  MESSAGE("default corpus: " << text);
  MESSAGE(d1.description);
  CHECK(text.find_first_not_of(cfg.alphabet) == std::string::npos);
}

TEST_CASE("markov: rows are distributions, pi is stationary") {
  for (int64_t order : {1, 2}) {
    MarkovConfig cfg;
    cfg.order = order;
    MarkovSource s(cfg);
    CHECK(s.num_contexts() == (order == 1 ? 27 : 27 * 27));
    double pi_sum = 0;
    std::vector<double> pi_next(static_cast<size_t>(s.num_contexts()), 0.0);
    for (int64_t ctx = 0; ctx < s.num_contexts(); ++ctx) {
      double row = 0;
      for (int64_t c = 0; c < s.num_symbols(); ++c) {
        CHECK(s.prob(ctx, c) > 0);
        row += s.prob(ctx, c);
        pi_next[(ctx * s.num_symbols() + c) % s.num_contexts()] += s.stationary()[ctx] * s.prob(ctx, c);
      }
      CHECK(row == doctest::Approx(1.0).epsilon(1e-12));
      pi_sum += s.stationary()[ctx];
    }
    CHECK(pi_sum == doctest::Approx(1.0).epsilon(1e-12));
    for (int64_t ctx = 0; ctx < s.num_contexts(); ++ctx) CHECK(std::abs(pi_next[ctx] - s.stationary()[ctx]) < 1e-13);
  }
}

TEST_CASE("markov: the entropy rate is the true model's mean loss on generated text") {
  for (int64_t order : {1, 2}) {
    MarkovConfig cfg;
    cfg.order = order;
    MarkovSource s(cfg);
    Generator gen(2024);
    const int64_t n = 400000;
    std::vector<int32_t> x = s.generate(n, gen);
    // -log P(x_t | previous `order` symbols), averaged: an unbiased estimate of the rate.
    double loss = 0, loss_sq = 0;
    int64_t count = 0;
    for (int64_t t = order; t < n; ++t) {
      int64_t ctx = order == 1 ? x[t - 1] : x[t - 2] * s.num_symbols() + x[t - 1];
      double l = -std::log(s.prob(ctx, x[t]));
      loss += l;
      loss_sq += l * l;
      ++count;
    }
    double mean = loss / double(count);
    double stderr_ = std::sqrt((loss_sq / double(count) - mean * mean) / double(count));
    MESSAGE("order " << order << ": entropy rate " << s.entropy_rate() << " nats/token, empirical " << mean << " +- "
                     << stderr_ << "; unigram " << s.entropy_given(0) << ", bigram " << s.entropy_given(1)
                     << ", window floor (T=64) " << s.window_loss_floor(64));
    // Samples are correlated along the chain; 6 naive standard errors is a generous bound.
    CHECK(std::abs(mean - s.entropy_rate()) < 6 * stderr_ + 1e-3);
    CHECK(s.entropy_given(0) >= s.entropy_given(1));
    CHECK(s.entropy_given(1) >= s.entropy_rate());
    CHECK(s.window_loss_floor(64) >= s.entropy_rate());
    if (order == 1) CHECK(s.window_loss_floor(64) == s.entropy_rate());
    else CHECK(s.window_loss_floor(64) > s.entropy_rate());
  }
  MarkovConfig defaults;
  CHECK(MarkovSource(defaults).entropy_rate() == doctest::Approx(1.12021).epsilon(1e-5));
}

TEST_CASE("markov: bad settings name the key") {
  MarkovConfig c;
  c.order = 3;
  CHECK(error_of<ConfigError>([&] { MarkovSource s(c); }) == "data.markov.order: must be 1 or 2, got 3");
  c = MarkovConfig{};
  c.alphabet.assign(1, 'a');
  CHECK(contains(error_of<ConfigError>([&] { MarkovSource s(c); }), "data.markov.alphabet: needs 2 to 256"));
  c = MarkovConfig{};
  c.alphabet = "abca";
  c.max_successors = 3;
  CHECK(error_of<ConfigError>([&] { MarkovSource s(c); }) == "data.markov.alphabet: symbols must be distinct");
  c = MarkovConfig{};
  c.smoothing = 0;
  CHECK(contains(error_of<ConfigError>([&] { MarkovSource s(c); }), "data.markov.smoothing: must be in (0, 1)"));
  c = MarkovConfig{};
  c.max_successors = 40;
  CHECK(contains(error_of<ConfigError>([&] { MarkovSource s(c); }), "data.markov.min_successors"));
}
