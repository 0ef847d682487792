// Tests of the GPT and the encoder-decoder Transformer: nanoGPT names and counts, tying,
// init schemes, config validation, summary, to(float64), KV-cache decoding.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/ops.h"
#include "autograd/cpu/threads.h"
#include "nn/gpt.h"
#include "nn/transformer.h"

using namespace sf;

static double max_abs_diff(const Tensor& a, const Tensor& b) {
  REQUIRE(a.shape() == b.shape());
  auto x = a.to_vector(), y = b.to_vector();
  double m = 0;
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]));
  return m;
}

static GPTConfig small_gpt() {
  GPTConfig c;
  c.vocab_size = 13;
  c.block_size = 16;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  return c;
}

static IntTensor ids(int64_t B, int64_t T, int64_t V, uint64_t seed) {
  Generator gen(seed);
  IntTensor t({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
  for (int64_t i = 0; i < B * T; ++i) t[i] = static_cast<int32_t>(gen.randint(V));
  return t;
}

TEST_CASE("GPT: parameter names and shapes as nanoGPT's state_dict") {
  auto m = std::make_unique<GPT>(small_gpt());
  auto named = m->named_parameters(false);  // every name, as state_dict
  std::vector<std::string> expect = {"transformer.wte.weight",
                                     "transformer.wpe.weight",
                                     "transformer.h.0.ln_1.weight",
                                     "transformer.h.0.ln_1.bias",
                                     "transformer.h.0.attn.c_attn.weight",
                                     "transformer.h.0.attn.c_attn.bias",
                                     "transformer.h.0.attn.c_proj.weight",
                                     "transformer.h.0.attn.c_proj.bias",
                                     "transformer.h.0.ln_2.weight",
                                     "transformer.h.0.ln_2.bias",
                                     "transformer.h.0.mlp.c_fc.weight",
                                     "transformer.h.0.mlp.c_fc.bias",
                                     "transformer.h.0.mlp.c_proj.weight",
                                     "transformer.h.0.mlp.c_proj.bias"};
  for (size_t i = 0; i < expect.size(); ++i) CHECK(named[i].first == expect[i]);
  CHECK(named[named.size() - 3].first == "transformer.ln_f.weight");
  CHECK(named.back().first == "lm_head.weight");
  CHECK(m->parameter("transformer.h.1.attn.c_attn.weight").shape() == Shape{48, 16});
  CHECK(m->parameter("transformer.h.1.mlp.c_fc.weight").shape() == Shape{64, 16});
  // Count as nanoGPT: wte + wpe + L * (2 LN + attn + mlp) + ln_f, head tied.
  int64_t C = 16, V = 13, L = 2;
  int64_t per_block = 2 * 2 * C + (3 * C * C + 3 * C) + (C * C + C) + (4 * C * C + 4 * C) + (4 * C * C + C);
  CHECK(m->num_parameters() == V * C + 16 * C + L * per_block + 2 * C);
}

TEST_CASE("GPT: tied head shares the embedding's storage, listed once") {
  auto m = std::make_unique<GPT>(small_gpt());
  CHECK(m->lm_head->weight.same(m->wte.weight));
  CHECK(m->named_parameters().size() + 1 == m->named_parameters(false).size());
  IntTensor idx = ids(2, 5, 13, 1);
  m->loss(idx, ids(2, 5, 13, 2)).backward();
  // The one gradient holds both uses (embedding rows + head).
  CHECK(m->wte.weight.grad().same(m->lm_head->weight.grad()));
  GPTConfig c = small_gpt();
  c.tied_head = false;
  auto untied = std::make_unique<GPT>(c);
  CHECK(!untied->lm_head->weight.same(untied->wte.weight));
  CHECK(untied->num_parameters() == m->num_parameters() + 13 * 16);
}

TEST_CASE("GPT: bias=false and positional encodings change the parameter set") {
  GPTConfig c = small_gpt();
  c.bias = false;
  auto m = std::make_unique<GPT>(c);
  for (auto& [n, p] : m->named_parameters()) CHECK(n.find("bias") == std::string::npos);
  for (PosEncoding pos : {PosEncoding::sinusoidal, PosEncoding::rope, PosEncoding::alibi, PosEncoding::none}) {
    GPTConfig d = small_gpt();
    d.pos_encoding = pos;
    auto g = std::make_unique<GPT>(d);
    CHECK_THROWS_AS(g->parameter("transformer.wpe.weight"), ConfigError);
    CHECK(g->forward(ids(1, 4, 13, 3)).shape() == Shape{1, 4, 13});
  }
  GPTConfig post = small_gpt();
  post.norm = NormPlacement::post;
  auto p = std::make_unique<GPT>(post);
  CHECK(!p->ln_f.has_value());
}

TEST_CASE("GPT: config validation names the field") {
  GPTConfig c = small_gpt();
  c.n_head = 3;
  CHECK_THROWS_WITH_AS(
      c.validate(),
      doctest::Contains("n_embd: must be divisible by n_head = 3 (each head gets n_embd / n_head dimensions), got 16"),
      ConfigError);
  c = small_gpt();
  c.block_size = 0;
  CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains("block_size"), ConfigError);
  // The options are enums; their names are read at the config boundary, where an unknown one is
  // a ConfigError naming the option (tests/train/test_config.cpp).
  c = small_gpt();
  c.dropout = 1.0;
  CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains("dropout"), ConfigError);
  auto m = std::make_unique<GPT>(small_gpt());
  CHECK_THROWS_WITH_AS(m->forward(ids(1, 17, 13, 1)), doctest::Contains("block_size"), ShapeError);
  CHECK_THROWS_AS(m->forward(IntTensor({1, 2}, {0, 13})), ShapeError);  // id outside vocab
}

TEST_CASE("GPT: gpt2 init statistics, xavier bound, seeded") {
  GPTConfig c = small_gpt();
  c.n_embd = 64;
  c.n_layer = 4;
  auto m = std::make_unique<GPT>(c);
  auto stddev = [](const Tensor& t) {
    double s = 0;
    for (double v : t.to_vector()) s += v * v;
    return std::sqrt(s / static_cast<double>(t.numel()));
  };
  CHECK(stddev(m->parameter("transformer.h.0.attn.c_attn.weight")) == doctest::Approx(0.02).epsilon(0.05));
  CHECK(stddev(m->parameter("transformer.h.0.mlp.c_proj.weight")) ==
        doctest::Approx(0.02 / std::sqrt(8.0)).epsilon(0.05));
  CHECK(m->parameter("transformer.h.0.attn.c_attn.bias").to_vector() == std::vector<double>(192, 0.0));
  CHECK(m->parameter("transformer.h.0.ln_1.weight").to_vector() == std::vector<double>(64, 1.0));
  auto again = std::make_unique<GPT>(c);
  CHECK(max_abs_diff(m->flat_parameters(), again->flat_parameters()) == 0);  // same seed
  c.init = InitScheme::xavier;
  auto x = std::make_unique<GPT>(c);
  double bound = std::sqrt(6.0 / (64 + 192));
  double mx = 0;
  for (double v : x->parameter("transformer.h.0.attn.c_attn.weight").to_vector()) mx = std::max(mx, std::fabs(v));
  CHECK(mx <= bound);
  CHECK(mx > 0.9 * bound);
}

TEST_CASE("GPT: train/eval switches dropout everywhere") {
  GPTConfig c = small_gpt();
  c.dropout = 0.3;
  auto m = std::make_unique<GPT>(c);
  IntTensor idx = ids(2, 6, 13, 4);
  CHECK(max_abs_diff(m->forward(idx), m->forward(idx)) > 0);
  m->eval();
  CHECK(!m->h[1].mlp.drop.training());
  CHECK(max_abs_diff(m->forward(idx), m->forward(idx)) == 0);
}

TEST_CASE("GPT: to(float64) keeps names, tying, flat buffers and the function") {
  auto m = std::make_unique<GPT>(small_gpt());
  IntTensor idx = ids(2, 6, 13, 5);
  Tensor y32 = m->forward(idx);
  auto names = m->named_parameters(false);
  m->to(DType::f64);
  CHECK(m->dtype() == DType::f64);
  CHECK(m->is_flat());
  CHECK(m->lm_head->weight.same(m->wte.weight));
  CHECK(m->named_parameters(false).size() == names.size());
  Tensor y64 = m->forward(idx);
  CHECK(y64.dtype() == DType::f64);
  CHECK(max_abs_diff(y32, y64) < 1e-4);
}

TEST_CASE("GPT: summary lists the tree with shapes and counts") {
  auto m = std::make_unique<GPT>(small_gpt());
  std::string s = m->summary();
  CHECK(s.find("GPT(vocab=13") == 0);
  CHECK(s.find("(wte): Embedding(13, 16)  weight (13, 16)  [208]") != std::string::npos);
  CHECK(s.find("(c_attn): Linear(in=16, out=48, bias)  weight (48, 16), bias (48)  [816]") != std::string::npos);
  CHECK(s.find("(lm_head): Linear(in=16, out=13, no bias)  weight (13, 16)  [208]") != std::string::npos);
  CHECK(s.find("parameters: " + format_count(m->num_parameters())) != std::string::npos);
  CHECK(s.find("1 tied") != std::string::npos);
}

TEST_CASE("GPT: KV-cache logits equal a full recompute (each positional encoding, pre/post LN)") {
  for (NormPlacement norm : {NormPlacement::pre, NormPlacement::post})
    for (PosEncoding pos :
         {PosEncoding::learned, PosEncoding::sinusoidal, PosEncoding::rope, PosEncoding::alibi, PosEncoding::none}) {
      GPTConfig c = small_gpt();
      c.pos_encoding = pos;
      c.norm = norm;
      c.window = pos == PosEncoding::alibi ? 3 : 0;  // one case with a sliding window
      auto m = std::make_unique<GPT>(c);
      IntTensor idx = ids(2, 9, 13, 6);
      Tensor full = m->forward(idx);  // (B, T, V)
      GPTCache cache;
      std::vector<Tensor> parts;
      int64_t start = 0;
      for (int64_t len : {4, 1, 1, 3}) {
        IntTensor part({2, len}, std::vector<int32_t>(static_cast<size_t>(2 * len)));
        for (int64_t b = 0; b < 2; ++b)
          for (int64_t t = 0; t < len; ++t) part[b * len + t] = idx[b * 9 + start + t];
        parts.push_back(m->forward(part, cache));
        start += len;
      }
      CHECK(cache.length() == 9);
      INFO(norm_name(norm) << " " << pos_encoding_name(pos));
      CHECK(max_abs_diff(concat(parts, 1), full) < 1e-5);
    }
}

TEST_CASE("GPT: generate greedy matches argmax of full recomputes") {
  auto m = std::make_unique<GPT>(small_gpt());
  Generator gen(1);
  IntTensor start({1, 2}, {3, 7});
  IntTensor out = m->generate(start, 20, 0.0, 0, gen);  // runs past block_size 16: crops
  REQUIRE(out.shape == std::vector<int64_t>{1, 22});
  // Check the first 10 greedy tokens against argmax of full forwards.
  std::vector<int32_t> seq = {3, 7};
  for (int step = 0; step < 10; ++step) {
    IntTensor ctx({1, static_cast<int64_t>(seq.size())}, seq);
    std::vector<double> logits = m->forward(ctx).to_vector();
    auto last = logits.end() - 13;
    seq.push_back(static_cast<int32_t>(std::max_element(last, logits.end()) - last));
    CHECK(out[static_cast<int64_t>(seq.size()) - 1] == seq.back());
  }
  IntTensor sampled = m->generate(start, 5, 1.0, 3, gen);
  CHECK(sampled.numel() == 7);
}

static TransformerConfig small_transformer() {
  TransformerConfig c;
  c.src_vocab_size = 11;
  c.tgt_vocab_size = 12;
  c.max_len = 16;
  c.n_encoder_layers = 2;
  c.n_decoder_layers = 2;
  c.n_head = 2;
  c.d_model = 16;
  c.d_ff = 32;
  c.dropout = 0.0;
  return c;
}

TEST_CASE("Transformer: names, sharing, tying, validation") {
  auto m = std::make_unique<Transformer>(small_transformer());
  auto named = m->named_parameters();
  CHECK(named.front().first == "src_embed.weight");
  CHECK(named[1].first == "tgt_embed.weight");
  CHECK(m->parameter("encoder.layers.1.attn.c_attn.weight").shape() == Shape{48, 16});
  CHECK(m->parameter("decoder.layers.0.cross_attn.c_kv.weight").shape() == Shape{32, 16});
  CHECK(m->parameter("decoder.ln_f.weight").shape() == Shape{16});
  CHECK(m->parameter("generator.weight").shape() == Shape{12, 16});
  TransformerConfig c = small_transformer();
  c.shared_embeddings = true;
  CHECK_THROWS_WITH_AS(Transformer{c}, doctest::Contains("shared_embeddings"), ConfigError);
  c.tgt_vocab_size = 11;
  c.tied_head = true;
  auto shared = std::make_unique<Transformer>(c);
  CHECK(shared->tgt_embed->weight.same(shared->src_embed.weight));
  CHECK(shared->generator->weight.same(shared->src_embed.weight));
  CHECK(shared->num_parameters() == m->num_parameters() - 12 * 16 - 12 * 16 - 12);
  c = small_transformer();
  c.d_model = 15;
  CHECK_THROWS_WITH_AS(
      c.validate(),
      doctest::Contains(
          "d_model: must be divisible by n_head = 2 (each head gets d_model / n_head dimensions), got 15"),
      ConfigError);
}

TEST_CASE("Transformer: padding of the source hides those tokens from the decoder") {
  auto m = std::make_unique<Transformer>(small_transformer());
  m->eval();
  IntTensor src = ids(1, 6, 11, 7), tgt = ids(1, 4, 12, 8);
  Tensor pad = Tensor::from_vector({0, 0, 0, 0, 1, 1}, {1, 6});
  Tensor a = m->forward(src, tgt, pad);
  src[4] = (src[4] + 1) % 11;  // change padded tokens: nothing may change
  src[5] = (src[5] + 3) % 11;
  CHECK(max_abs_diff(m->forward(src, tgt, pad), a) == 0);
  src[1] = (src[1] + 1) % 11;  // change a real token: the output changes
  CHECK(max_abs_diff(m->forward(src, tgt, pad), a) > 0);
  CHECK(Transformer::padding_mask(IntTensor({1, 3}, {5, 0, 0}), 0).to_vector() == std::vector<double>{0, 1, 1});
}

TEST_CASE("Transformer: KV-cache decode equals a full recompute, greedy decode") {
  for (NormPlacement norm : {NormPlacement::pre, NormPlacement::post})
    for (PosEncoding pos : {PosEncoding::sinusoidal, PosEncoding::learned, PosEncoding::rope, PosEncoding::alibi}) {
      TransformerConfig c = small_transformer();
      c.norm = norm;
      c.pos_encoding = pos;
      auto m = std::make_unique<Transformer>(c);
      IntTensor src = ids(2, 7, 11, 9), tgt = ids(2, 5, 12, 10);
      Tensor src_pad = Tensor::from_vector({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1}, {2, 7});
      Tensor full = m->forward(src, tgt, src_pad);  // (B, T, V)
      Tensor memory = m->encode(src, src_pad);
      TransformerCache cache;
      std::vector<Tensor> parts;
      for (int64_t t = 0; t < 5; ++t) {
        IntTensor one({2, 1}, {tgt[t], tgt[5 + t]});
        parts.push_back(m->decode(one, memory, src_pad, Tensor(), &cache));
      }
      INFO(norm_name(norm) << " " << pos_encoding_name(pos));
      CHECK(max_abs_diff(concat(parts, 1), full) < 1e-5);
    }
  auto m = std::make_unique<Transformer>(small_transformer());
  IntTensor src = ids(2, 7, 11, 11);
  IntTensor out = m->greedy_decode(src, Tensor(), 1, 2, 8);
  CHECK(out.shape[0] == 2);
  CHECK(out[0] == 1);
  CHECK(out.shape[1] <= 8);
}

TEST_CASE("GPT: logits at position t do not depend on tokens after t") {
  for (PosEncoding pos : {PosEncoding::learned, PosEncoding::rope, PosEncoding::alibi}) {
    GPTConfig c = small_gpt();
    c.pos_encoding = pos;
    auto m = std::make_unique<GPT>(c);
    IntTensor idx = ids(1, 7, 13, 12);
    Tensor a = m->forward(idx);
    idx[6] = (idx[6] + 5) % 13;
    Tensor b = m->forward(idx);
    for (int64_t t = 0; t < 6; ++t)
      for (int64_t v = 0; v < 13; ++v) CHECK(a.at({0, t, v}) == b.at({0, t, v}));
    double last = 0;
    for (int64_t v = 0; v < 13; ++v) last += std::fabs(a.at({0, 6, v}) - b.at({0, 6, v}));
    CHECK(last > 0);
  }
}

TEST_CASE("a GPT training step gives the same bits on one thread and on two") {
  // The thread pool splits gemms by blocks of C, attention by (batch, head), elementwise loops on
  // fixed boundaries and LayerNorm's parameter gradients by fixed row blocks: nothing depends on
  // how many threads run, so a run is reproducible whatever SF_NUM_THREADS says.
  GPTConfig cfg = small_gpt();  // widened so the gemms and attention are big enough to be split
  cfg.vocab_size = 29;
  cfg.block_size = 64;
  cfg.n_head = 4;
  cfg.n_embd = 64;
  cfg.activation = Activation::gelu_tanh;
  std::vector<int32_t> ids(8 * 64), next(8 * 64);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = static_cast<int32_t>((i * 7 + i / 5) % 29);
    next[i] = static_cast<int32_t>((i * 11 + 3) % 29);
  }
  IntTensor idx({8, 64}, ids), targets({8, 64}, next);
  auto step = [&](int threads) {
    set_num_threads(threads);
    GPT model(cfg);
    Tensor loss = model.loss(idx, targets);
    loss.backward();
    std::vector<float> out = {loss.data<float>()[0]};
    const float* g = model.flat_grads().data<float>();
    out.insert(out.end(), g, g + model.flat_grads().numel());
    return out;
  };
  std::vector<float> one = step(1), two = step(2);
  set_num_threads(0);
  REQUIRE(one.size() == two.size());
  size_t first = 0;
  while (first < one.size() && one[first] == two[first]) ++first;
  INFO("first difference at " << first << " (0 is the loss, then the flat gradient)");
  CHECK(one == two);
}
