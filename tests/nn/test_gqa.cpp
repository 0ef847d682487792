// Grouped-query and multi-query attention (model.n_kv_head): shapes, the KV cache holding only
// the K/V heads, cached decoding against a full forward, the cache-size arithmetic and the errors.
// (Float64 gradchecks: nn/gradcheck_modules.cpp; parity with PyTorch: test_parity_gqa.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "autograd/errors.h"
#include "autograd/ops.h"
#include "nn/gpt.h"

using namespace sf;

namespace {

GPTConfig gqa_gpt(int64_t n_kv_head, PosEncoding pos = PosEncoding::learned) {
  GPTConfig c;
  c.vocab_size = 13;
  c.block_size = 16;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 16;
  c.n_kv_head = n_kv_head;
  c.pos_encoding = pos;
  return c;
}

IntTensor random_ids(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  Generator gen(seed);
  IntTensor t({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
  for (int64_t i = 0; i < B * T; ++i) t[i] = static_cast<int32_t>(gen.randint(V));
  return t;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(x[i] - y[i]));
  return worst;
}

}  // namespace

TEST_CASE("GQA / MQA: c_attn narrows to C + 2 G D outputs, and the parameter count with it") {
  for (int64_t G : {4, 2, 1}) {
    GPT m(gqa_gpt(G));
    const Tensor w = m.parameter("transformer.h.0.attn.c_attn.weight");
    CHECK(w.shape() == Shape{16 + 2 * G * 4, 16});  // (C + 2 G D, C), D = 4
    CHECK(m.parameter("transformer.h.0.attn.c_attn.bias").shape() == Shape{16 + 2 * G * 4});
  }
  CHECK(GPT(gqa_gpt(0)).num_parameters() == GPT(gqa_gpt(4)).num_parameters());  // 0 means n_head
}

TEST_CASE("GQA / MQA: KV-cache logits equal a full recompute, and the cache holds G heads") {
  for (int64_t G : {2, 1})
    for (PosEncoding pos : {PosEncoding::learned, PosEncoding::rope}) {
      GPT m(gqa_gpt(G, pos));
      IntTensor idx = random_ids(2, 9, 13, 3);
      Tensor full = m.forward(idx);  // (B, T, V)
      GPTCache cache;
      std::vector<Tensor> parts;
      int64_t start = 0;
      for (int64_t len : {4, 1, 1, 3}) {
        IntTensor part({2, len}, std::vector<int32_t>(static_cast<size_t>(2 * len)));
        for (int64_t b = 0; b < 2; ++b)
          for (int64_t t = 0; t < len; ++t) part[b * len + t] = idx[b * 9 + start + t];
        parts.push_back(m.forward(part, cache));
        start += len;
      }
      INFO("n_kv_head " << G << ", " << pos_encoding_name(pos));
      CHECK(cache.layers[0].k.shape() == Shape{2, G, 9, 4});  // (B, G, S, D): only the K/V heads
      CHECK(cache.layers[0].v.shape() == Shape{2, G, 9, 4});
      CHECK(max_abs_diff(concat(parts, 1), full) < 1e-5);
    }
}

TEST_CASE("GQA: greedy generation with the cache equals argmax of full forwards") {
  GPT m(gqa_gpt(2));
  IntTensor prompt = random_ids(1, 3, 13, 5);
  Generator gen(1);
  IntTensor out = m.generate(prompt, 6, 0.0, 0, gen);  // temperature 0: greedy
  REQUIRE(out.numel() == 9);
  for (int64_t t = 3; t < 9; ++t) {  // each new token is the argmax of the uncached logits
    IntTensor ctx({1, t}, std::vector<int32_t>(out.data.begin(), out.data.begin() + t));
    std::vector<double> logits = m.forward(ctx).to_vector();
    int best = 0;
    for (int v = 1; v < 13; ++v)
      if (logits[static_cast<size_t>((t - 1) * 13 + v)] > logits[static_cast<size_t>((t - 1) * 13 + best)]) best = v;
    CHECK(out[t] == best);
  }
}

TEST_CASE("kv_cache_bytes_per_token: 2 n_layer G D elements") {
  GPTConfig gpt2;  // GPT-2 small: 12 layers, 12 heads, C 768, D 64
  CHECK(kv_cache_bytes_per_token(gpt2) == 2 * 12 * 768 * 4);
  gpt2.n_kv_head = 1;  // multi-query
  CHECK(kv_cache_bytes_per_token(gpt2) == 2 * 12 * 64 * 4);
  gpt2.n_kv_head = 4;
  CHECK(kv_cache_bytes_per_token(gpt2, DType::f64) == 2 * 12 * 4 * 64 * 8);
  AttentionConfig layer;
  layer.d_model = 4096;
  layer.n_head = 32;
  layer.n_kv_head = 8;
  CHECK(kv_cache_bytes_per_token(layer) == 2 * 8 * 128 * 4);
}

TEST_CASE("n_kv_head that does not divide n_head is one line naming it") {
  CHECK_THROWS_WITH_AS(GPT(gqa_gpt(3)),
                       "model: n_kv_head: must be 0 or a divisor of n_head = 4 (n_head: standard, 1: multi-query, "
                       "a divisor: grouped-query), got 3",
                       ConfigError);
  CHECK_THROWS_AS(GPT(gqa_gpt(-1)), ConfigError);
  CHECK_THROWS_AS(GPT(gqa_gpt(8)), ConfigError);
}
