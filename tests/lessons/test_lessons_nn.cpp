// The key numbers of the lessons built on nn/ (positions, multi-head attention, blocks).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "lessons/common/diagrams.h"
#include "lessons/common/pictures.h"
#include "lessons/decoder.h"
#include "lessons/encoder.h"
#include "lessons/lesson.h"
#include "lessons/multihead.h"
#include "lessons/positions.h"
#include "lessons/prenorm.h"
#include "nn/module.h"

using namespace sf::lessons;

static void check_close(const std::vector<double>& got, const std::vector<double>& want, double eps) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(got[i] - want[i]) <= eps);
  }
}

TEST_CASE("lesson 8: sinusoids, the shift rotation, RoPE's relative scores, ALiBi, order") {
  std::ostringstream out;
  PositionsResult r = run_lesson_positions(out);
  // Row p = 1 of the table: sin/cos of 1 * 10000^(-2i/8).
  std::vector<double> row1;
  for (int i = 0; i < 4; ++i) {
    double w = std::pow(10000.0, -2.0 * i / 8);
    row1.push_back(std::sin(w));
    row1.push_back(std::cos(w));
  }
  check_close(r.pe_row1, row1, 1e-12);
  CHECK(r.shift_error < 1e-12);
  CHECK(r.learned_error.find("outside") != std::string::npos);
  REQUIRE(r.rope_scores.size() == 5);
  CHECK(r.rope_scores[0] == doctest::Approx(r.rope_scores[1]).epsilon(1e-12));  // distance 2
  CHECK(r.rope_scores[0] == doctest::Approx(r.rope_scores[2]).epsilon(1e-12));
  CHECK(r.rope_scores[3] == doctest::Approx(r.rope_scores[4]).epsilon(1e-12));  // distance 3
  CHECK(std::fabs(r.rope_scores[0] - r.rope_scores[3]) > 1e-3);
  CHECK(std::fabs(r.rope_scores[0] - 0.36) > 1e-3);  // positions do change the score
  CHECK(r.rope_norm_ratio == doctest::Approx(1.0).epsilon(1e-12));
  check_close(r.alibi_slopes, {0.25, 0.0625, 0.015625, 0.00390625}, 0);
  REQUIRE(r.alibi_head0.size() == 25);
  for (int t = 0; t < 5; ++t)
    for (int s = 0; s < 5; ++s) CHECK(r.alibi_head0[static_cast<size_t>(t * 5 + s)] == -0.25 * std::abs(t - s));
  CHECK(r.order_blind_diff < 1e-12);
  CHECK(r.order_aware_diff > 1e-3);
}

TEST_CASE("lesson 7: head shapes, module equality, 2,359,296 weights") {
  std::ostringstream out;
  MultiHeadResult r = run_lesson_multihead(out);
  using S = std::vector<int64_t>;
  REQUIRE(r.shapes.size() == 8);
  CHECK(r.shapes[0] == S{1, 5, 16});
  CHECK(r.shapes[1] == S{1, 5, 48});
  CHECK(r.shapes[2] == S{1, 4, 5, 4});
  CHECK(r.shapes[5] == S{1, 4, 5, 4});
  CHECK(r.shapes[6] == S{1, 5, 16});
  CHECK(r.shapes[7] == S{1, 5, 16});
  CHECK(r.steps_vs_module < 1e-6);
  REQUIRE(r.weights.size() == 4 * 5 * 5);
  for (size_t row = 0; row < 20; ++row) {
    double s = 0;
    for (size_t k = 0; k < 5; ++k) s += r.weights[row * 5 + k];
    CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
  }
  CHECK(r.params_no_bias == 4 * 768 * 768);
  CHECK(r.params_no_bias == 2359296);
  CHECK(r.params_bias == 2359296 + 4 * 768);
}

TEST_CASE("lesson 11: the residual steps are the block, the identity path carries the gradient") {
  std::ostringstream out;
  EncoderResult r = run_lesson_encoder(out);
  CHECK(r.by_hand_vs_block < 1e-6);
  REQUIRE(r.norms.size() == 5);
  for (double n : r.norms) CHECK(n > 0);
  // y = x + a + f: dL/dx = G + (sublayer part), so |dx - G| is bounded by the sublayer part only.
  CHECK(r.grad_with_residual > 0);
  CHECK(r.grad_sublayers_only < r.grad_upstream);
  CHECK(r.grad_without_residual < r.grad_with_residual);
  // At GPT-2 initialisation every block is close to the identity: the stream's norm moves < 1%.
  REQUIRE(r.stack_norms.size() == 12);
  for (double n : r.stack_norms) CHECK(std::fabs(n - r.norms[0]) < 0.01 * r.norms[0]);
}

TEST_CASE("lesson 12: the KV cache gives the recomputed logits with fewer multiply-adds") {
  std::ostringstream out;
  DecoderResult r = run_lesson_decoder(out);
  REQUIRE(r.self_weights.size() == 16);
  for (int t = 0; t < 4; ++t)
    for (int s = t + 1; s < 4; ++s) CHECK(r.self_weights[static_cast<size_t>(t * 4 + s)] == 0.0);  // causal
  CHECK(r.self_weights[0] == doctest::Approx(1.0));
  REQUIRE(r.cross_weights.size() == 12);
  for (double w : r.cross_weights) CHECK(w > 0);  // no mask: every source token visible
  CHECK(r.cache_vs_full < 1e-5);
  // The padded source: no query of either attention looks at <pad>.
  CHECK(r.pad_weight_encoder == 0.0);
  CHECK(r.pad_weight_cross == 0.0);
  // Counts for 4 tokens of L=2, C=16, F=32, V=8, S=3, written out per step from the formula
  // in the lesson's text: per layer n*4C^2 + 2n(past+n)C + n*2C^2 + [S*2C^2] + 2nSC + n*2CF, + nCV.
  auto step = [](int64_t n, int64_t past, bool kv) {
    const int64_t C = 16, F = 32, V = 8, S = 3;
    int64_t layer = n * 4 * C * C + 2 * n * (past + n) * C + n * 2 * C * C + (kv ? S * 2 * C * C : 0) + 2 * n * S * C +
                    n * 2 * C * F;
    return 2 * layer + n * C * V;
  };
  CHECK(r.tiny_without == step(1, 0, true) + step(2, 0, true) + step(3, 0, true) + step(4, 0, true));
  CHECK(r.tiny_with == step(1, 0, true) + step(1, 1, false) + step(1, 2, false) + step(1, 3, false));
  CHECK(r.base_with < r.base_without / 20);
}

TEST_CASE(
    "lesson 15: Post-LN pins the stream at sqrt(C) and its gradients grow toward the output, Pre-LN's stream grows and its gradients shrink") {
  std::ostringstream out;
  PreNormResult r = run_lesson_prenorm(out);
  CHECK(r.loss_pre == doctest::Approx(r.loss_pre_model).epsilon(1e-6));
  CHECK(r.loss_post == doctest::Approx(r.loss_post_model).epsilon(1e-6));
  CHECK(r.loss_pre > std::log(64.0));  // random targets: an untrained model does worse than a uniform guess
  CHECK(r.loss_post > std::log(64.0));
  REQUIRE(r.pre_hidden.size() == 12);
  REQUIRE(r.post_hidden.size() == 12);
  for (double h : r.post_hidden) CHECK(h == doctest::Approx(8.0).epsilon(1e-3));  // LN output, gain 1
  CHECK(r.pre_hidden.back() > 2 * r.pre_hidden.front());                          // the running sum grows
  CHECK(r.pre_param_grad.back() < 0.8 * r.pre_param_grad.front());                // and the gradients shrink with it
  CHECK(r.post_param_grad.back() > 1.2 * r.post_param_grad.front());              // Post-LN's grow toward the output
  CHECK(r.post_param_grad.back() > 2 * r.pre_param_grad.back());
  for (double g : r.pre_hidden_grad) CHECK(g > 0);
  for (double g : r.post_hidden_grad) CHECK(g > 0);
}

// The idea pictures' DOT carries the numbers of the objects it is given, not typed-in ones.
static int occurrences(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_CASE("idea pictures: the GPT stack's counts are a built model's, a mask cell is dark where the weight is 0") {
  sf::GPTConfig small;
  small.vocab_size = 11, small.block_size = 8, small.n_layer = 3, small.n_head = 2, small.n_embd = 16;
  small.bias = false;
  const std::string dot = gpt_stack_dot({{"small", small}});
  sf::GPT model(small);
  CHECK(occurrences(dot, "small: " + sf::format_count(model.num_parameters()) + " parameters") == 1);
  const int64_t block = model.h[0].num_parameters();
  CHECK(occurrences(dot, sf::format_count(block) + " parameters each, " + sf::format_count(3 * block) + " in all") ==
        1);
  CHECK(occurrences(dot, "token embedding wte (11, 16)\n" + sf::format_count(11 * 16) + " parameters") == 1);
  CHECK(occurrences(dot, "tied: it is wte") == 1);

  Seq2SeqPicture p;
  p.source = {"a", "<pad>"};
  p.target = {"x", "y"};
  p.self_weights = {1, 0, 0.5, 0.5};
  p.cross_weights = {0.7, 0, 1, 0};
  const std::string wiring = seq2seq_dot(p);
  CHECK(occurrences(wiring, ">masked<") == 3);  // one above the causal diagonal, two in the <pad> column
  CHECK(occurrences(wiring, "<td border=\"0\">&lt;pad&gt;</td>") == 1);  // escaped in the mask's HTML-like label
}

TEST_CASE("idea pictures: without an image folder nothing is described or drawn, and the line is printed") {
  std::ostringstream out;
  bool described = false;
  draw_graphviz(out, "nothing.png", [&] {
    described = true;
    return std::string("digraph G {}");
  });
  CHECK_FALSE(described);
  CHECK(out.str() == "picture: images/nothing.png\n");
}
