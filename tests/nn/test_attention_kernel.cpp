// The attention kernel choice (model.attention) seen from the models: a GPT trains to the same
// losses on the stored and on the tiled kernel.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/gpt.h"

using namespace sf;

namespace {

GPTConfig tiny_gpt(AttentionKernel attention) {
  GPTConfig c;
  c.vocab_size = 23;
  c.block_size = 80;  // T = 80 > 64: two query tiles, two key tiles
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 32;
  c.attention = attention;
  return c;
}

struct Training {
  std::vector<double> losses;
  std::vector<double> first_grad;  // of transformer.h.0.attn.c_attn.weight, after step 1
};

// `steps` steps of plain SGD (lr 0.5) on one fixed batch of random tokens.
Training sgd_steps(const GPTConfig& config, int steps) {
  GPT model(config);
  Generator gen(4);
  const int64_t B = 2, T = config.block_size;
  std::vector<int32_t> ids(static_cast<size_t>(B * (T + 1)));
  for (auto& id : ids) id = static_cast<int32_t>(gen.uniform() * static_cast<double>(config.vocab_size));
  std::vector<int32_t> x, y;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      x.push_back(ids[static_cast<size_t>(b * (T + 1) + t)]);
      y.push_back(ids[static_cast<size_t>(b * (T + 1) + t + 1)]);
    }
  IntTensor idx({B, T}, x), targets({B, T}, y);
  Training run;
  for (int step = 0; step < steps; ++step) {
    model.zero_grad();
    Tensor loss = model.loss(idx, targets);
    run.losses.push_back(loss.item());
    loss.backward();
    if (step == 0) run.first_grad = model.parameter("transformer.h.0.attn.c_attn.weight").grad().to_vector();
    for (Tensor& p : model.parameters()) {  // p -= 0.5 * grad, in place
      float* w = p.data<float>();
      const float* g = p.grad().data<float>();
      for (int64_t i = 0; i < p.numel(); ++i) w[i] -= 0.5f * g[i];
    }
  }
  return run;
}

}  // namespace

// float32. The kernels round differently (about 1e-6 relative per attention output, see
// tests/autograd/test_attention_tiled.cpp): the gradients differ in their last bits, and 6 SGD
// steps carry that into the weights; the losses must agree to 1e-4 relative (they turn out equal
// to float32 printing precision).
TEST_CASE("a GPT trains to the same losses with model.attention stored and tiled") {
  Training s = sgd_steps(tiny_gpt(AttentionKernel::stored), 6), t = sgd_steps(tiny_gpt(AttentionKernel::tiled), 6);
  const std::vector<double>&stored = s.losses, &tiled = t.losses;
  REQUIRE(stored.size() == tiled.size());
  CHECK(stored.back() < stored.front());  // it learns
  for (size_t i = 0; i < stored.size(); ++i) {
    INFO("step " << i << ": stored " << stored[i] << ", tiled " << tiled[i]);
    CHECK(std::fabs(stored[i] - tiled[i]) <= 1e-4 * std::fabs(stored[i]));
  }
  CHECK(s.first_grad != t.first_grad);  // two kernels really ran
  double worst = 0, scale = 0;
  for (size_t i = 0; i < s.first_grad.size(); ++i) {
    worst = std::max(worst, std::fabs(s.first_grad[i] - t.first_grad[i]));
    scale = std::max(scale, std::fabs(s.first_grad[i]));
  }
  CHECK(worst <= 1e-4 * scale);
}
