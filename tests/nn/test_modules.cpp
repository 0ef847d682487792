// Tests of the layers, positional encodings and attention: values against the formulas,
// masks, parameter counts, modes and errors.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "nn/attention.h"
#include "nn/blocks.h"
#include "nn/layers.h"
#include "nn/positional.h"

using namespace sf;

static Tensor randn(const Shape& s, uint64_t seed, DType dtype = DType::f32) {
  Generator gen(seed);
  return Tensor::randn(s, gen, 1.0, dtype);
}

static double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  auto x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

TEST_CASE("Linear: y = x W^T + b with W (out, in)") {
  Linear m(3, 2);
  CHECK(m.weight.shape() == Shape{2, 3});
  CHECK(m.bias.shape() == Shape{2});
  Tensor x = Tensor::from_vector({1, 2, 3}, {1, 3});
  Tensor y = m.forward(x);
  for (int64_t o = 0; o < 2; ++o) {
    double expect = m.bias.at({o});
    for (int64_t i = 0; i < 3; ++i) expect += x.at({0, i}) * m.weight.at({o, i});
    CHECK(y.at({0, o}) == doctest::Approx(expect).epsilon(1e-6));
  }
  Linear no_bias(3, 2, false);
  CHECK(no_bias.named_parameters().size() == 1);
  CHECK(no_bias.num_parameters() == 6);
  CHECK_THROWS_AS(Linear(0, 2), ConfigError);
}

TEST_CASE("Embedding and LayerNorm") {
  Embedding e(5, 3);
  Tensor y = e.forward(IntTensor({1, 2}, {4, 0}));
  CHECK(y.shape() == Shape{1, 2, 3});
  CHECK(y.at({0, 0, 2}) == e.weight.at({4, 2}));
  LayerNorm ln(4);
  Tensor z = ln.forward(Tensor::from_vector({1, 2, 3, 4}, {1, 4}));
  double mean = 0, var = 0;
  for (double v : z.to_vector()) mean += v / 4;
  for (double v : z.to_vector()) var += (v - mean) * (v - mean) / 4;
  CHECK(mean == doctest::Approx(0).epsilon(1e-6));
  CHECK(var == doctest::Approx(1.0 / (1.0 + 1e-5 / 1.25)).epsilon(1e-5));
  LayerNorm no_bias(4, 1e-5, false);
  CHECK(no_bias.num_parameters() == 4);
}

TEST_CASE("Dropout: active in training, identity in eval") {
  Dropout d(0.5);
  Tensor x = Tensor::ones({1000});
  Tensor y = d.forward(x);
  int zeros = 0;
  for (double v : y.to_vector()) {
    CHECK((v == 0.0 || v == doctest::Approx(2.0)));
    zeros += v == 0.0;
  }
  CHECK(zeros > 400);
  CHECK(zeros < 600);
  d.eval();
  CHECK(d.forward(x).to_vector() == x.to_vector());
  CHECK_THROWS_AS(Dropout(1.0), ConfigError);
}

TEST_CASE("FeedForward: hidden 4C by default, c_fc then c_proj") {
  FeedForward f(8);
  CHECK(f.c_fc.weight.shape() == Shape{32, 8});
  CHECK(f.c_proj.weight.shape() == Shape{8, 32});
  CHECK(f.num_parameters() == 32 * 8 + 32 + 8 * 32 + 8);
  Tensor x = randn({2, 3, 8}, 1);
  Tensor expect = f.c_proj.forward(gelu(f.c_fc.forward(x)));
  CHECK(max_abs_diff(f.forward(x), expect) == 0.0);
  FeedForward r(8, 5, Activation::relu);
  CHECK(max_abs_diff(r.forward(x), r.c_proj.forward(relu(r.c_fc.forward(x)))) == 0.0);
}

TEST_CASE("sinusoidal table matches the formula") {
  Tensor pe = sinusoidal_table(5, 6, 2, DType::f64);
  for (int64_t p = 0; p < 5; ++p)
    for (int64_t i = 0; i < 3; ++i) {
      double angle = (p + 2) / std::pow(10000.0, 2.0 * i / 6.0);
      CHECK(pe.at({p, 2 * i}) == doctest::Approx(std::sin(angle)));
      CHECK(pe.at({p, 2 * i + 1}) == doctest::Approx(std::cos(angle)));
    }
}

TEST_CASE("rope: norm kept, q.k depends only on the distance") {
  Tensor q = randn({1, 1, 1, 8}, 2, DType::f64), k = randn({1, 1, 1, 8}, 3, DType::f64);
  auto dot_at = [&](int64_t pq, int64_t pk) {
    Tensor a = rope(q, pq), b = rope(k, pk);
    return sum(a * b).item();
  };
  CHECK(dot_at(5, 2) == doctest::Approx(dot_at(13, 10)).epsilon(1e-12));
  CHECK(dot_at(0, 0) == doctest::Approx(sum(q * k).item()).epsilon(1e-12));
  CHECK(sum(rope(q, 7) * rope(q, 7)).item() == doctest::Approx(sum(q * q).item()).epsilon(1e-12));
  // rotate-half: position 1 rotates pair (0, 4) by theta_0 = 1 rad
  Tensor e0 = Tensor::zeros({1, 1, 1, 8}, DType::f64);
  e0.data<double>()[0] = 1;
  Tensor r = rope(e0, 1);
  CHECK(r.at({0, 0, 0, 0}) == doctest::Approx(std::cos(1.0)));
  CHECK(r.at({0, 0, 0, 4}) == doctest::Approx(std::sin(1.0)));
  CHECK_THROWS_AS(rope(randn({1, 1, 2, 5}, 1)), ShapeError);
}

TEST_CASE("alibi slopes follow the paper, including non powers of two") {
  auto s8 = alibi_slopes(8);
  for (int h = 0; h < 8; ++h) CHECK(s8[h] == doctest::Approx(std::pow(2.0, -(h + 1.0))));
  auto s6 = alibi_slopes(6);  // 4 slopes of H=4, then slopes 0 and 2 of H=8 (2^-1, 2^-3)
  std::vector<double> expect = {std::pow(2.0, -2), std::pow(2.0, -4), std::pow(2.0, -6),
                                std::pow(2.0, -8), std::pow(2.0, -1), std::pow(2.0, -3)};
  REQUIRE(s6.size() == 6);
  for (int h = 0; h < 6; ++h) CHECK(s6[h] == doctest::Approx(expect[h]));
  Tensor b = alibi_bias(s8, 2, 3, DType::f64);  // queries at positions 1, 2
  CHECK(b.shape() == Shape{1, 8, 2, 3});
  CHECK(b.at({0, 0, 0, 0}) == doctest::Approx(-0.5));
  CHECK(b.at({0, 1, 1, 0}) == doctest::Approx(-0.25 * 2));
  CHECK(b.at({0, 1, 1, 2}) == 0.0);
}

TEST_CASE("MultiHeadAttention: GPT-2 small parameter count and layout") {
  AttentionConfig c;
  c.d_model = 768;
  c.n_head = 12;
  MultiHeadAttention m(c);
  CHECK(m.num_parameters() == 4 * 768 * 768 + 4 * 768);  // 2,359,296 weights + 3,072 biases
  CHECK(m.c_attn->weight.shape() == Shape{3 * 768, 768});
  auto named = m.named_parameters();
  CHECK(named[0].first == "c_attn.weight");
  CHECK(named[3].first == "c_proj.bias");
  c.cross = true;
  MultiHeadAttention x(c);
  CHECK(x.num_parameters() == 4 * 768 * 768 + 4 * 768);
  CHECK(x.named_parameters()[0].first == "c_q.weight");
  CHECK(x.named_parameters()[2].first == "c_kv.weight");
}

TEST_CASE("MultiHeadAttention: d_model not divisible by heads is a ConfigError") {
  AttentionConfig c;
  c.d_model = 10;
  c.n_head = 3;
  CHECK_THROWS_WITH_AS(MultiHeadAttention{c}, doctest::Contains("attention: d_model: must be divisible by n_head = 3"),
                       ConfigError);
  c.d_model = 6;
  c.pos = PosEncoding::rope;  // head size 2 is fine, 3 heads of 2
  CHECK_NOTHROW(MultiHeadAttention{c});
  c.n_head = 2;  // head size 3: odd
  CHECK_THROWS_AS(MultiHeadAttention{c}, ConfigError);
}

TEST_CASE("MultiHeadAttention: matches the formula written out with plain ops") {
  AttentionConfig c;
  c.d_model = 8;
  c.n_head = 2;
  MultiHeadAttention m(c);
  Tensor x = randn({2, 5, 8}, 4);
  AttentionMask mask;
  mask.causal = true;
  Tensor y = m.forward(x, mask);
  // By hand: q, k, v from slices of c_attn, heads by reshape + permute, softmax(q k^T / 2) v.
  Tensor qkv = m.c_attn->forward(x);  // (B, T, 3C)
  auto heads = [&](int64_t i) { return permute(reshape(slice(qkv, 2, 8 * i, 8 * i + 8), {2, 5, 2, 4}), {0, 2, 1, 3}); };
  Tensor q = heads(0), k = heads(1), v = heads(2);
  Tensor causal = Tensor::zeros({5, 5});
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = i + 1; j < 5; ++j) causal.data<float>()[i * 5 + j] = 1;
  Tensor att = softmax(masked_fill(matmul(q, transpose(k, 2, 3)) / 2.0, causal, -INFINITY), -1);
  Tensor expect = m.c_proj.forward(reshape(permute(matmul(att, v), {0, 2, 1, 3}), {2, 5, 8}));
  CHECK(max_abs_diff(y, expect) < 1e-5);
}

TEST_CASE("attention masks: a fully masked row gives zeros, never NaN") {
  AttentionConfig c;
  c.d_model = 8;
  c.n_head = 2;
  MultiHeadAttention m(c);
  m.keep_attention(true);
  Tensor x = randn({2, 3, 8}, 5).requires_grad_();
  AttentionMask mask;
  mask.key_padding = Tensor::from_vector({0, 0, 1, 1, 1, 1}, {2, 3});  // batch 1: all keys padded
  Tensor y = m.forward(x, mask);
  for (double v : y.to_vector()) CHECK(std::isfinite(v));
  const Tensor& w = m.last_attention();
  REQUIRE(w.shape() == Shape{2, 2, 3, 3});
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t t = 0; t < 3; ++t) {
      CHECK(w.at({0, h, t, 2}) == 0.0);  // padded key never attended
      CHECK(w.at({0, h, t, 0}) + w.at({0, h, t, 1}) == doctest::Approx(1.0));
      for (int64_t s = 0; s < 3; ++s) CHECK(w.at({1, h, t, s}) == 0.0);
    }
  // The fully masked batch element's attention output is 0, so its y is just c_proj's bias.
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t o = 0; o < 8; ++o) CHECK(y.at({1, t, o}) == doctest::Approx(m.c_proj.bias.at({o})));
  sum(y).backward();
  for (double g : x.grad().to_vector()) CHECK(std::isfinite(g));
  // Composed path agrees and is NaN-free too.
  Tensor q = randn({2, 2, 3, 4}, 6), k = randn({2, 2, 3, 4}, 7);
  Tensor p = attention_weights(q, k, mask);
  for (double v : p.to_vector()) CHECK(std::isfinite(v));
}

TEST_CASE("attention masks: causal output does not depend on future tokens") {
  AttentionConfig c;
  c.d_model = 8;
  c.n_head = 2;
  for (PosEncoding pos : {PosEncoding::none, PosEncoding::rope, PosEncoding::alibi}) {
    c.pos = pos;
    MultiHeadAttention m(c);
    AttentionMask mask;
    mask.causal = true;
    Tensor x = randn({1, 6, 8}, 8);
    Tensor y1 = m.forward(x, mask);
    Tensor x2 = x.clone();
    for (int64_t j = 0; j < 8; ++j) x2.data<float>()[5 * 8 + j] += 3.0f;  // change the last token
    Tensor y2 = m.forward(x2, mask);
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t j = 0; j < 8; ++j) CHECK(y1.at({0, t, j}) == y2.at({0, t, j}));
    bool last_changed = false;
    for (int64_t j = 0; j < 8; ++j) last_changed |= y1.at({0, 5, j}) != y2.at({0, 5, j});
    CHECK(last_changed);
  }
}

TEST_CASE("attention masks: sliding window sees exactly keys i-w < j <= i") {
  AttentionConfig c;
  c.d_model = 4;
  c.n_head = 1;
  MultiHeadAttention m(c);
  m.keep_attention(true);
  AttentionMask mask;
  mask.causal = true;
  mask.window = 2;
  m.forward(randn({1, 5, 4}, 9), mask);
  const Tensor& w = m.last_attention();
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      bool visible = j <= i && j > i - 2;
      if (visible) CHECK(w.at({0, 0, i, j}) > 0.0);
      else CHECK(w.at({0, 0, i, j}) == 0.0);
    }
}

TEST_CASE("attention: fused path equals the composed path (masks, alibi)") {
  Tensor q = randn({2, 2, 4, 4}, 10, DType::f64), k = randn({2, 2, 6, 4}, 11, DType::f64),
         v = randn({2, 2, 6, 4}, 12, DType::f64);
  AttentionMask mask;
  mask.causal = true;
  mask.window = 3;
  mask.key_padding = Tensor::from_vector({0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, {2, 6}, DType::f64);
  Tensor bias = alibi_bias(alibi_slopes(2), 4, 6, DType::f64);
  AttentionOptions o;
  o.causal = true;
  o.window = 3;
  o.key_padding = mask.key_padding;
  o.bias = bias;
  Tensor fused = attention(q, k, v, o);
  Tensor composed = matmul(attention_weights(q, k, mask, bias), v);
  CHECK(max_abs_diff(fused, composed) < 1e-12);
}

TEST_CASE("attention: dropout on the weights in training, none in eval") {
  AttentionConfig c;
  c.d_model = 8;
  c.n_head = 2;
  c.dropout = 0.5;
  MultiHeadAttention m(c);
  Tensor x = randn({1, 4, 8}, 13);
  Tensor a = m.forward(x), b = m.forward(x);
  CHECK(max_abs_diff(a, b) > 0);  // different masks
  m.eval();
  CHECK(max_abs_diff(m.forward(x), m.forward(x)) == 0);
}

TEST_CASE("attention: KV cache gives the same outputs as one full pass") {
  AttentionConfig c;
  c.d_model = 8;
  c.n_head = 2;
  for (PosEncoding pos : {PosEncoding::none, PosEncoding::rope, PosEncoding::alibi}) {
    c.pos = pos;
    MultiHeadAttention m(c);
    AttentionMask mask;
    mask.causal = true;
    Tensor x = randn({2, 5, 8}, 14);
    Tensor full = m.forward(x, mask);
    KVCache cache;
    Tensor first = m.forward(slice(x, 1, 0, 3), mask, &cache);  // 3 tokens, then 1, then 1
    Tensor second = m.forward(slice(x, 1, 3, 4), mask, &cache);
    Tensor third = m.forward(slice(x, 1, 4, 5), mask, &cache);
    CHECK(cache.length() == 5);
    CHECK(max_abs_diff(concat({first, second, third}, 1), full) < 1e-5);
  }
}

TEST_CASE("blocks: Pre-LN and Post-LN formulas, names") {
  for (bool pre : {true, false}) {
    BlockConfig bc;
    bc.d_model = 8;
    bc.n_head = 2;
    bc.norm = pre ? NormPlacement::pre : NormPlacement::post;
    SelfAttentionBlock b(bc);
    Tensor x = randn({2, 3, 8}, 15);
    Tensor expect;
    if (pre) {
      Tensor h = x + b.attn.forward(b.ln_1.forward(x));
      expect = h + b.mlp.forward(b.ln_2.forward(h));
    } else {
      Tensor h = b.ln_1.forward(x + b.attn.forward(x));
      expect = b.ln_2.forward(h + b.mlp.forward(h));
    }
    CHECK(max_abs_diff(b.forward(x), expect) == 0.0);
    CHECK(b.extra_repr() == (pre ? "pre-LN" : "post-LN"));  // the summary's words, from norm_name
    DecoderBlock d(bc);
    std::vector<std::string> names;
    for (auto& [n, p] : d.named_parameters()) names.push_back(n);
    CHECK(names.front() == "ln_1.weight");
    CHECK(std::find(names.begin(), names.end(), "cross_attn.c_kv.weight") != names.end());
    CHECK(names.back() == "mlp.c_proj.bias");
    CHECK(d.forward(x, randn({2, 4, 8}, 16)).shape() == Shape{2, 3, 8});
  }
}
