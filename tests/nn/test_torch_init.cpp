// TorchGenerator makes PyTorch's draws, and init_parameters_like_torch gives nanoGPT's initial
// weights: checked against tests/reference/nn/torch_rng.safetensors, written by
// tests/reference/gen_torch_rng_ref.py with torch 1.13 (no torch needed here).
//
// Integers (randint) and uniforms must match exactly. Normals of 16 or more elements may differ
// in the last bits: PyTorch computes their Box-Muller with AVX2 polynomial log/sin/cos, we with
// the C library's (see torch_generator.h); they are checked to 4 float32 ulps of the value.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "autograd/torch_generator.h"
#include "nn/gpt.h"
#include "nn/init.h"
#include "nn/safetensors.h"

using namespace sf;

namespace {

const NamedTensors& reference() {
  static NamedTensors ref = load_safetensors(std::string(SF_SOURCE_DIR) + "/tests/reference/nn/torch_rng.safetensors");
  return ref;
}

std::vector<double> ref_values(const std::string& name) {
  for (auto& [n, t] : reference())
    if (n == name) return t.to_vector();
  FAIL("reference tensor " << name << " missing");
  return {};
}

// |ours - torch| <= ulps float32 spacings at |torch| (exactly equal when ulps is 0).
void check_close(const std::vector<double>& ours, const std::vector<double>& torch, double ulps,
                 const std::string& what) {
  REQUIRE(ours.size() == torch.size());
  double worst = 0;
  for (size_t i = 0; i < ours.size(); ++i) {
    double spacing = std::max(std::abs(torch[i]), 1e-30) * 0x1.0p-23;
    worst = std::max(worst, std::abs(ours[i] - torch[i]) / spacing);
  }
  INFO(what << ": worst difference " << worst << " float32 ulps");
  CHECK(worst <= ulps);
}

std::vector<double> draw_normal(TorchGenerator& g, int64_t n, double mean, double stddev) {
  std::vector<float> x(static_cast<size_t>(n));
  g.normal_(x.data(), n, mean, stddev);
  return {x.begin(), x.end()};
}

std::vector<double> draw_randint(TorchGenerator& g, int64_t high, int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(static_cast<double>(g.randint(high)));
  return out;
}

}  // namespace

TEST_CASE("TorchGenerator makes torch.manual_seed(1337)'s draws: randint, normal_, uniform_") {
  TorchGenerator g(1337);
  CHECK(draw_randint(g, 1000003, 7) == ref_values("draws.randint_a"));
  check_close(draw_normal(g, 20, 0, 1), ref_values("draws.normal_20"), 4, "normal_ on 20 (ragged tail)");
  std::vector<float> u(3);
  g.uniform_(u.data(), 3, -1, 1);
  CHECK(std::vector<double>(u.begin(), u.end()) == ref_values("draws.uniform_3"));
  // Under 16 elements PyTorch draws doubles (no AVX2 path): the same bits expected.
  check_close(draw_normal(g, 5, 0, 1), ref_values("draws.normal_5"), 0, "normal_ on 5 (cached second value)");
  check_close(draw_normal(g, 16, 1.0, 0.5), ref_values("draws.normal_16_mean1_std05"), 4, "normal_(1, 0.5) on 16");
  CHECK(draw_randint(g, 1000003, 7) == ref_values("draws.randint_b"));
}

TEST_CASE("TorchGenerator state: saved and restored mid-stream it continues the same, bad state is an Error") {
  TorchGenerator g(42);
  std::vector<float> scratch(5);
  g.normal_(scratch.data(), 5, 0, 1);  // leaves a cached normal behind
  const std::string saved = g.state();
  std::vector<double> a = draw_normal(g, 3, 0, 1), ai = draw_randint(g, 97, 5);
  TorchGenerator h(7);
  h.set_state(saved);
  CHECK(draw_normal(h, 3, 0, 1) == a);
  CHECK(draw_randint(h, 97, 5) == ai);

  CHECK_THROWS_AS(h.set_state(""), Error);
  CHECK_THROWS_AS(h.set_state("1 2 3"), Error);
  CHECK_THROWS_AS(h.set_state(saved + " 9"), Error);
  std::string too_big = "4294967296" + saved.substr(saved.find(' '));  // a word of 33 bits
  CHECK_THROWS_AS(h.set_state(too_big), Error);
  CHECK_THROWS_AS(h.set_state("-" + saved), Error);
  CHECK_THROWS_AS(TorchGenerator(1).randint(0), Error);
}

TEST_CASE("init_parameters_like_torch gives nanoGPT's initial weights, and the stream goes on to its batches") {
  nlohmann::json cases = nlohmann::json::parse(
      read_safetensors_header(std::string(SF_SOURCE_DIR) + "/tests/reference/nn/torch_rng.safetensors")
          .metadata.at("cases"));
  for (const std::string name : {"nobias", "bias"}) {
    CAPTURE(name);
    const nlohmann::json& c = cases.at(name);
    GPTConfig g;
    g.vocab_size = c.at("vocab_size");
    g.block_size = c.at("block_size");
    g.n_layer = c.at("n_layer");
    g.n_head = c.at("n_head");
    g.n_embd = c.at("n_embd");
    g.bias = c.at("bias");
    g.tied_head = true;
    GPT model(g);
    TorchGenerator gen(c.at("seed").get<uint64_t>());
    init_parameters_like_torch(model, g.n_layer, gen);
    int checked = 0;
    for (auto& [pname, p] : model.named_parameters()) {
      check_close(p.to_vector(), ref_values("gpt_" + name + "." + pname), 4, pname);
      ++checked;
    }
    int expected = 0;  // every parameter torch has, the batch starts aside
    for (auto& [rname, t] : reference())
      if (rname.rfind("gpt_" + name + ".", 0) == 0 && rname != "gpt_" + name + ".starts") ++expected;
    CHECK(checked == expected);
    std::vector<double> starts = ref_values("gpt_" + name + ".starts");
    CHECK(draw_randint(gen, 1000 - g.block_size, 12) == starts);
  }
}
