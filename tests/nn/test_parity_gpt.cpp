// A nanoGPT checkpoint converted with tools/nanogpt_convert.py loads into our GPT by name and
// gives nanoGPT's logits (within 1e-4, the conversion criterion), and the same GPT
// matches the nanoGPT-layout model in PyTorch on logits, loss and every parameter gradient
// within the parity criterion |ours - torch| <= 1e-5 * max(1, |torch|) (float32).
//
// Data: tests/reference/gen_nn_ref.py builds tests/reference/nanogpt_model.py (nanoGPT's layout,
// bias true and false), saves a ckpt.pt (the no-bias one with torch.compile's '_orig_mod.'
// prefix), converts it into tests/reference/nn/nanogpt_<case>/{model.safetensors, config.json}
// and stores torch's logits, loss and gradients in nanogpt_<case>_ref.safetensors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "nn/gpt.h"
#include "nn/state_dict.h"

using namespace sf;
using json = nlohmann::json;

namespace {

std::string ref_path(const std::string& rel) { return std::string(SF_SOURCE_DIR) + "/" + rel; }

// The converter's config.json uses GPTConfig's field names.
GPTConfig read_config(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot open " << path);
  json j = json::parse(in);
  GPTConfig c;
  c.vocab_size = j.at("vocab_size");
  c.block_size = j.at("block_size");
  c.n_layer = j.at("n_layer");
  c.n_head = j.at("n_head");
  c.n_embd = j.at("n_embd");
  c.d_ff = j.at("d_ff");
  c.dropout = j.at("dropout");
  c.bias = j.at("bias");
  c.tied_head = j.at("tied_head");
  c.pos_encoding = parse_named(kPosEncodings, j.at("pos_encoding"), "pos_encoding");
  c.norm = parse_named(kNorms, j.at("norm"), "norm");
  c.activation = parse_named(kActivations, j.at("activation"), "activation");
  c.ln_eps = j.at("ln_eps");
  c.scale_embeddings = j.value("scale_embeddings", false);
  return c;
}

IntTensor read_ids(const std::string& text) {
  json j = json::parse(text);
  IntTensor ids;
  ids.shape = {static_cast<int64_t>(j.size()), static_cast<int64_t>(j.at(0).size())};
  for (const auto& row : j)
    for (const auto& v : row) ids.data.push_back(v.get<int32_t>());
  return ids;
}

double worst_error(const Tensor& ours, const Tensor& ref) {
  REQUIRE(ours.defined());
  REQUIRE(ours.shape() == ref.shape());
  std::vector<double> a = ours.to_vector(), b = ref.to_vector();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double e = std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i]));
    if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
  }
  return worst;
}

struct GptCase {
  std::map<std::string, Tensor> ref;
  Metadata meta;
  std::unique_ptr<GPT> model;
};

// Loads the reference file and the converted model (config + weights) it names.
GptCase load_gpt_case(const std::string& name) {
  GptCase c;
  for (auto& [n, t] : load_safetensors(ref_path("tests/reference/nn/" + name + "_ref.safetensors"), &c.meta))
    c.ref[n] = t;
  c.model = std::make_unique<GPT>(read_config(ref_path(c.meta.at("config"))));
  c.model->eval();
  load_state_dict(*c.model, ref_path(c.meta.at("weights")));
  return c;
}

}  // namespace

TEST_CASE("nanoGPT checkpoints converted by tools/nanogpt_convert.py give nanoGPT's logits") {
  for (const char* name : {"nanogpt_bias", "nanogpt_nobias"}) {
    CAPTURE(name);
    GptCase c = load_gpt_case(name);
    // the converted file stores the tied lm_head once; our GPT ties it back
    CHECK(c.model->lm_head->weight.same(c.model->wte.weight));
    CHECK(c.model->config().bias == (std::string(name) == "nanogpt_bias"));
    Tensor logits = c.model->forward(read_ids(c.meta.at("idx")));
    double err = worst_error(logits, c.ref.at("logits"));
    CHECK(err <= 1e-4);
    std::printf("convert %-15s logits %.2e (criterion 1e-4)\n", name, err);
  }
}

TEST_CASE("parity GPT vs nanoGPT-layout torch model: logits, loss and all parameter gradients") {
  // gpt_post_ln_paper: Xiong et al.'s setting (embeddings * sqrt(C), sinusoidal, Post-LN without
  // a final LayerNorm, ReLU, untied head), written out in torch by tests/reference/gen_nn_ref.py.
  for (const char* name : {"nanogpt_bias", "nanogpt_nobias", "gpt_post_ln_paper"}) {
    CAPTURE(name);
    GptCase c = load_gpt_case(name);
    IntTensor idx = read_ids(c.meta.at("idx")), targets = read_ids(c.meta.at("targets"));
    double logit_err = worst_error(c.model->forward(idx), c.ref.at("logits"));
    CHECK(logit_err <= 1e-5);
    c.model->zero_grad();
    Tensor loss = c.model->loss(idx, targets);
    double loss_err = worst_error(reshape(loss, {1}), c.ref.at("loss"));
    CHECK(loss_err <= 1e-5);
    loss.backward();
    double grad_err = 0;
    int n = 0;
    for (const auto& [pname, p] : c.model->named_parameters()) {
      CAPTURE(pname);
      REQUIRE(c.ref.count("grad.param." + pname));
      double e = worst_error(p.grad(), c.ref.at("grad.param." + pname));
      CHECK(e <= 1e-5);
      grad_err = std::max(grad_err, e);
      ++n;
    }
    int n_ref = 0;
    for (auto& [k, t] : c.ref) n_ref += k.rfind("grad.param.", 0) == 0;
    CHECK(n == n_ref);
    std::printf("parity %-28s logits %.2e  loss %.2e  grads (%d params) %.2e\n", name, logit_err, loss_err, n,
                grad_err);
  }
}
