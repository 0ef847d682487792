// The head scores (train/head_scores.h) on attention matrices made by hand, whose scores
// are worked out in the comments.
#include <doctest/doctest.h>

#include "autograd/errors.h"
#include "train/head_scores.h"

using sf::AttentionMatrix;

// Rows are queries, columns keys; every row sums to 1 and nothing lies above the diagonal.
static AttentionMatrix previous_head(int64_t T) {  // all attention one token back (row 0 on itself)
  AttentionMatrix w(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(T), 0.0));
  w[0][0] = 1;
  for (size_t q = 1; q < w.size(); ++q) w[q][q - 1] = 1;
  return w;
}

static AttentionMatrix uniform_head(int64_t T) {
  AttentionMatrix w(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(T), 0.0));
  for (size_t q = 0; q < w.size(); ++q)
    for (size_t k = 0; k <= q; ++k) w[q][k] = 1.0 / static_cast<double>(q + 1);
  return w;
}

TEST_CASE("previous-token score: 1 for a head that looks one back, the baseline for even attention") {
  CHECK(sf::previous_token_score(previous_head(6)) == doctest::Approx(1.0));
  // even attention: row q puts 1/(q+1) on q-1; over q = 1, 2, 3: (1/2 + 1/3 + 1/4) / 3
  CHECK(sf::previous_token_score(uniform_head(4)) == doctest::Approx((0.5 + 1.0 / 3 + 0.25) / 3));
  CHECK(sf::previous_token_baseline(4) == doctest::Approx((0.5 + 1.0 / 3 + 0.25) / 3));
  // a head on itself scores 0
  AttentionMatrix self(3, std::vector<double>(3, 0.0));
  for (size_t q = 0; q < 3; ++q) self[q][q] = 1;
  CHECK(sf::previous_token_score(self) == 0.0);
}

TEST_CASE("induction score: the attention from the second copy on the token after the first occurrence") {
  // period 3: tokens a b c a b c. Query 3 (second a) should look at key 1 (b, which followed the
  // first a), query 4 at key 2, query 5 at key 3.
  AttentionMatrix w = uniform_head(6);
  for (size_t q = 3; q < 6; ++q) {
    std::fill(w[q].begin(), w[q].end(), 0.0);
    w[q][q - 2] = 1;
  }
  CHECK(sf::induction_score(w, 3) == doctest::Approx(1.0));
  // Half on the right key and half on the token itself scores 0.5 (query 5: half on key 3, half on 5)
  for (size_t q = 3; q < 6; ++q) w[q][q - 2] = 0.5, w[q][q] = 0.5;
  CHECK(sf::induction_score(w, 3) == doctest::Approx(0.5));
  // A previous-token head looks one back, not at the token after the earlier copy: score 0
  CHECK(sf::induction_score(previous_head(6), 3) == 0.0);
  // even attention: (1/4 + 1/5 + 1/6) / 3
  CHECK(sf::induction_score(uniform_head(6), 3) == doctest::Approx((0.25 + 0.2 + 1.0 / 6) / 3));
  CHECK(sf::induction_baseline(3) == doctest::Approx((0.25 + 0.2 + 1.0 / 6) / 3));
  CHECK_THROWS_WITH_AS(sf::induction_score(w, 4), doctest::Contains("needs at least 8 positions"), sf::ValueError);
}

TEST_CASE("word-start score: the attention on marked keys") {
  // "a bc d": word starts at 0 (a), 2 (b), 5 (d)
  std::vector<bool> starts = sf::word_starts({"a", " ", "b", "c", " ", "d"});
  CHECK(starts == std::vector<bool>{true, false, true, false, false, true});
  // A head that always looks at key 0 (a word start) scores 1; one looking one back scores the
  // share of rows whose previous token starts a word: q = 1 (a), q = 3 (b) of q = 1..5: 2/5.
  AttentionMatrix first(6, std::vector<double>(6, 0.0));
  for (auto& row : first) row[0] = 1;
  CHECK(sf::word_start_score(first, starts) == doctest::Approx(1.0));
  CHECK(sf::word_start_score(previous_head(6), starts) == doctest::Approx(0.4));
  // even attention: starts up to q over q + 1: q=1 1/2, q=2 2/3, q=3 2/4, q=4 2/5, q=5 3/6
  const double even = (0.5 + 2.0 / 3 + 0.5 + 0.4 + 0.5) / 5;
  CHECK(sf::word_start_score(uniform_head(6), starts) == doctest::Approx(even));
  CHECK(sf::word_start_baseline(starts) == doctest::Approx(even));
  CHECK_THROWS_WITH_AS(sf::word_start_score(first, {true}), doctest::Contains("1 word-start marks for 6"),
                       sf::ShapeError);
}

TEST_CASE("repeated random tokens: a seeded draw, then the same again") {
  std::vector<int32_t> ids = sf::repeated_random_tokens(5, 65, 7);
  REQUIRE(ids.size() == 10);
  for (size_t i = 0; i < 5; ++i) {
    CHECK(ids[i] == ids[i + 5]);
    CHECK(ids[i] >= 0);
    CHECK(ids[i] < 65);
  }
  CHECK(sf::repeated_random_tokens(5, 65, 7) == ids);
  CHECK(sf::repeated_random_tokens(5, 65, 8) != ids);
  CHECK_THROWS_AS(sf::repeated_random_tokens(0, 65, 7), sf::ValueError);
  CHECK_THROWS_AS(sf::induction_score({{1.0, 0.0}}, 1), sf::ShapeError);  // not square
}
