// SGD / Adam / AdamW against torch.optim on the same gradients (tests/reference/gen_optim_ref.py),
// the decay rule, and the merged update over parameters sharing one buffer.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "autograd/cpu/threads.h"
#include "optim/adam.h"
#include "optim/sgd.h"
#include "optim_test_util.h"

using namespace sf;
using sf::test::doubles;

namespace {

std::unique_ptr<Optimizer> make_optimizer(const nlohmann::json& config, NamedParameters params) {
  const nlohmann::json& o = config["options"];
  const std::string kind = config["optimizer"];
  if (kind == "sgd") {
    SGDOptions s;
    s.lr = o["lr"];
    s.momentum = o.value("momentum", 0.0);
    s.dampening = o.value("dampening", 0.0);
    s.weight_decay = o.value("weight_decay", 0.0);
    s.nesterov = o.value("nesterov", false);
    return std::make_unique<SGD>(std::move(params), s);
  }
  AdamOptions a;
  a.lr = o["lr"];
  a.beta1 = o["betas"][0];
  a.beta2 = o["betas"][1];
  a.eps = o["eps"];
  a.weight_decay = o.value("weight_decay", 0.0);
  if (config["decay_rule"] == "matrices") a.decay_rule = DecayRule::all_matrices();
  if (kind == "adam") return std::make_unique<Adam>(std::move(params), a);
  return std::make_unique<AdamW>(std::move(params), a);
}

// Fresh parameters from the reference's initial values; `shared` puts them (and, each step,
// their gradients) into one contiguous buffer, like a model that allocates parameters in one block.
struct ParamSet {
  NamedParameters params;
  std::shared_ptr<Storage> grad_block;
  ParamSet(const nlohmann::json& ref, bool shared) {
    int64_t total = 0;
    for (const auto& p : ref["params"]) total += shape_numel(p["shape"].get<Shape>());
    auto block = std::make_shared<Storage>(total * 4);
    grad_block = std::make_shared<Storage>(total * 4);
    size_t offset = 0;
    for (const auto& p : ref["params"]) {
      Shape shape = p["shape"].get<Shape>();
      Tensor init = Tensor::from_vector(doubles(p["init"]), shape);
      Tensor t = shared ? Tensor::view_of(block, offset, shape, DType::f32) : Tensor::empty(shape);
      std::memcpy(t.data<float>(), init.data<float>(), init.numel() * 4);
      t.requires_grad_();
      params.emplace_back(p["name"].get<std::string>(), t);
      offset += init.numel();
    }
    shared_ = shared;
  }
  void set_grads(const nlohmann::json& step_grads) {
    size_t offset = 0;
    for (auto& [name, p] : params) {
      const nlohmann::json& g = step_grads[name];
      if (g.is_null()) {
        p.set_grad(Tensor());
      } else {
        Tensor src = Tensor::from_vector(doubles(g), p.shape());
        Tensor dst = shared_ ? Tensor::view_of(grad_block, offset, p.shape(), DType::f32) : Tensor::empty(p.shape());
        std::memcpy(dst.data<float>(), src.data<float>(), src.numel() * 4);
        p.set_grad(dst);
      }
      offset += p.numel();
    }
  }
  bool shared_;
};

// Runs a reference configuration and returns the worst |ours - torch| over all steps and values.
double run_against_torch(const nlohmann::json& ref, const std::string& config_name, bool shared) {
  const nlohmann::json& config = ref["configs"][config_name];
  ParamSet set(ref, shared);
  auto opt = make_optimizer(config, set.params);
  double worst = 0;
  for (size_t step = 0; step < ref["grads"].size(); ++step) {
    set.set_grads(ref["grads"][step]);
    opt->step();
    for (const auto& [name, p] : set.params) {
      std::vector<double> want = doubles(config["params_after_step"][step][name]);
      std::vector<double> got = p.to_vector();
      for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    }
  }
  CHECK(opt->step_count() == static_cast<int64_t>(ref["grads"].size()));
  return worst;
}

}  // namespace

TEST_CASE("every optimizer configuration matches torch.optim within 1e-6 over 10 steps") {
  nlohmann::json ref = sf::test::load_reference("optim_ref.json");
  for (const auto& [name, config] : ref["configs"].items()) {
    CAPTURE(name);
    double worst = run_against_torch(ref, name, false);
    MESSAGE(name << ": worst |ours - torch| = " << worst);
    CHECK(worst <= 1e-6);
  }
}

TEST_CASE("parameters sharing one buffer are updated exactly as separate ones") {
  nlohmann::json ref = sf::test::load_reference("optim_ref.json");
  for (const char* name : {"sgd_nesterov", "adam_weight_decay", "adamw_default"}) {
    CAPTURE(name);
    // Same numbers bit for bit: merging runs must not change the arithmetic.
    ParamSet separate(ref, false), shared(ref, true);
    auto a = make_optimizer(ref["configs"][name], separate.params);
    auto b = make_optimizer(ref["configs"][name], shared.params);
    for (const auto& grads : ref["grads"]) {
      separate.set_grads(grads);
      shared.set_grads(grads);
      a->step();
      b->step();
    }
    for (size_t i = 0; i < separate.params.size(); ++i)
      CHECK(separate.params[i].second.to_vector() == shared.params[i].second.to_vector());
  }
}

TEST_CASE("the default decay rule skips biases, LayerNorm weights and embeddings") {
  Tensor w = Tensor::zeros({4, 4}), b = Tensor::zeros({4});
  DecayRule rule;
  CHECK(rule.applies("h.0.attn.c_proj.weight", w));
  CHECK_FALSE(rule.applies("h.0.attn.c_proj.bias", b));
  CHECK_FALSE(rule.applies("ln_f.weight", b));
  CHECK_FALSE(rule.applies("wte.weight", w));
  CHECK_FALSE(rule.applies("transformer.wpe.weight", w));
  CHECK_FALSE(rule.applies("encoder.tok_emb.weight", w));
  CHECK_FALSE(rule.applies("src_embed.weight", w));
  CHECK_FALSE(rule.applies("tgt_pos.weight", w));
  CHECK(rule.applies("encoder.layers.0.attn.c_proj.weight", w));
  CHECK(DecayRule::all_matrices().applies("wte.weight", w));
  CHECK_FALSE(DecayRule::all_matrices().applies("ln_f.weight", b));
  CHECK(DecayRule::everything().applies("ln_f.weight", b));

  AdamOptions o;
  o.weight_decay = 0.1;
  AdamW opt({{"wte.weight", w}, {"fc.weight", w.clone()}, {"fc.bias", b}}, o);
  CHECK_FALSE(opt.decays(0));
  CHECK(opt.decays(1));
  CHECK_FALSE(opt.decays(2));
}

TEST_CASE("AdamW with zero gradients only decays the selected parameters") {
  Tensor w = Tensor::full({2, 2}, 1.0).requires_grad_(), b = Tensor::full({2}, 1.0).requires_grad_();
  w.set_grad(Tensor::zeros({2, 2}));
  b.set_grad(Tensor::zeros({2}));
  AdamOptions o;
  o.lr = 0.1;
  o.weight_decay = 0.5;
  AdamW opt({{"fc.weight", w}, {"fc.bias", b}}, o);
  opt.step();
  // m = v = 0, so the Adam part is 0: w = 1 * (1 - 0.1 * 0.5), b untouched.
  CHECK(w.to_vector() == std::vector<double>(4, static_cast<float>(1 - 0.1 * 0.5)));
  CHECK(b.to_vector() == std::vector<double>(2, 1.0));
}

TEST_CASE("bad optimizer settings and parameters are clear errors") {
  Tensor w = Tensor::zeros({2, 2});
  SGDOptions s;
  s.nesterov = true;  // without momentum
  CHECK_THROWS_AS(SGD({{"w", w}}, s), ConfigError);
  AdamOptions a;
  a.beta2 = 1.0;
  CHECK_THROWS_AS(Adam({{"w", w}}, a), ConfigError);
  a = AdamOptions{};
  a.lr = -1;
  CHECK_THROWS_AS(AdamW({{"w", w}}, a), ConfigError);
  CHECK_THROWS_WITH_AS(AdamW({{"w", w}, {"w2", w}}, AdamOptions{}),
                       "optimizer: parameter 'w2' is listed twice (tied weights appear once)", Error);
  CHECK_THROWS_AS(AdamW({{"w", Tensor::zeros({2}, DType::f64)}}, AdamOptions{}), ShapeError);
}

TEST_CASE("all parameters as one job: the same bits on 1 and 2 threads, and as each parameter alone") {
  // Short runs (biases, LayerNorm weights) and long ones laid end to end and cut evenly over the
  // threads: each element must be updated exactly once, with its own parameter's settings.
  const std::vector<int64_t> sizes = {5, 40000, 3, 17000, 1, 70001, 64};
  auto make = [&](const std::string& kind, NamedParameters params) -> std::unique_ptr<Optimizer> {
    if (kind == "sgd") return std::make_unique<SGD>(std::move(params), SGDOptions{0.1, 0.9, 0.0, 0.01, true});
    AdamOptions a;
    a.lr = 0.01;
    a.weight_decay = 0.1;
    if (kind == "adam") return std::make_unique<Adam>(std::move(params), a);
    return std::make_unique<AdamW>(std::move(params), a);
  };
  for (const std::string kind : {"sgd", "adam", "adamw"}) {
    CAPTURE(kind);
    std::vector<std::vector<double>> results;  // 1 thread together, 2 threads together, each alone
    for (int variant = 0; variant < 3; ++variant) {
      set_num_threads(variant == 0 ? 1 : 2);
      Generator gen(11);
      NamedParameters params;
      for (size_t i = 0; i < sizes.size(); ++i) {
        // 2-D and 1-D alternate, so AdamW decays some and not others
        Shape shape = i % 2 ? Shape{sizes[i]} : Shape{1, sizes[i]};
        params.emplace_back("p" + std::to_string(i), Tensor::randn(shape, gen, 1.0).requires_grad_());
      }
      std::vector<std::unique_ptr<Optimizer>> opts;
      if (variant < 2) opts.push_back(make(kind, params));
      else
        for (auto& p : params) opts.push_back(make(kind, {p}));
      for (int step = 0; step < 3; ++step) {
        for (auto& [name, p] : params) p.set_grad(Tensor::randn(p.shape(), gen, 1.0));
        for (auto& o : opts) o->step();
      }
      std::vector<double> all;
      for (auto& [name, p] : params) {
        const std::vector<double> v = p.to_vector();
        all.insert(all.end(), v.begin(), v.end());
      }
      results.push_back(all);
    }
    set_num_threads(0);
    CHECK(results[0] == results[1]);
    CHECK(results[0] == results[2]);
  }
}
