// Optimizer state save/load: resuming continues bit for bit; mismatches name the tensor.
#include <doctest/doctest.h>

#include <limits>
#include <memory>
#include <string>

#include "optim/adam.h"
#include "optim/sgd.h"
#include "optim_test_util.h"

using namespace sf;

namespace {

NamedParameters make_params(uint64_t seed) {
  Generator gen(seed);
  NamedParameters params;
  params.emplace_back("wte.weight", Tensor::randn({5, 3}, gen).requires_grad_());
  params.emplace_back("fc.weight", Tensor::randn({4, 3}, gen).requires_grad_());
  params.emplace_back("fc.bias", Tensor::randn({4}, gen).requires_grad_());
  return params;
}

// Gradients of step k, the same for every run.
void set_grads(NamedParameters& params, int k) {
  Generator gen(1000 + k);
  for (auto& [name, p] : params) p.set_grad(Tensor::randn(p.shape(), gen, 0.1 * (k + 1)));
}

std::unique_ptr<Optimizer> make(const std::string& kind, NamedParameters params) {
  if (kind == "sgd") {
    SGDOptions o;
    o.lr = 0.05;
    o.momentum = 0.9;
    o.nesterov = true;
    o.weight_decay = 0.01;
    return std::make_unique<SGD>(std::move(params), o);
  }
  AdamOptions o;
  o.lr = 3e-3;
  o.weight_decay = 0.1;
  return std::make_unique<AdamW>(std::move(params), o);
}

OptimizerState snapshot(const Optimizer& opt) {  // what a checkpoint writes and reads back
  OptimizerState s = opt.state_dict();
  for (auto& [name, t] : s.tensors) t = t.clone();
  s.scalars = nlohmann::json::parse(s.scalars.dump());
  return s;
}

NamedParameters copy_of(const NamedParameters& params) {
  NamedParameters out;
  for (const auto& [name, p] : params) out.emplace_back(name, p.clone().requires_grad_());
  return out;
}

}  // namespace

TEST_CASE("a resumed optimizer continues bit for bit") {
  for (const char* kind : {"sgd", "adamw"}) {
    CAPTURE(kind);
    NamedParameters straight = make_params(7);
    auto a = make(kind, straight);
    for (int k = 0; k < 10; ++k) {
      set_grads(straight, k);
      a->set_lr(1e-2 * (k + 1));
      a->step();
    }

    NamedParameters first = make_params(7);
    auto b = make(kind, first);
    for (int k = 0; k < 4; ++k) {
      set_grads(first, k);
      b->set_lr(1e-2 * (k + 1));
      b->step();
    }
    OptimizerState saved = snapshot(*b);
    NamedParameters resumed = copy_of(first);  // the weights a checkpoint holds
    auto c = make(kind, resumed);
    c->load_state_dict(saved);
    CHECK(c->step_count() == 4);
    for (int k = 4; k < 10; ++k) {
      set_grads(resumed, k);
      c->set_lr(1e-2 * (k + 1));
      c->step();
    }
    for (size_t i = 0; i < straight.size(); ++i) CHECK(straight[i].second.to_vector() == resumed[i].second.to_vector());
    CHECK(c->step_count() == 10);
  }
}

TEST_CASE("optimizer state names its tensors by buffer and parameter") {
  auto opt = make("adamw", make_params(1));
  OptimizerState s = opt->state_dict();
  REQUIRE(s.tensors.size() == 6);
  CHECK(s.tensors[0].first == "exp_avg.wte.weight");
  CHECK(s.tensors[5].first == "exp_avg_sq.fc.bias");
  CHECK(s.scalars["optimizer"] == "adamw");
  CHECK(s.scalars["step"] == 0);
}

TEST_CASE("loading mismatched optimizer state throws CheckpointError naming the tensor") {
  NamedParameters params = make_params(3);
  auto opt = make("adamw", params);
  set_grads(params, 0);
  opt->step();
  const OptimizerState good = snapshot(*opt);
  const std::vector<double> m_before = opt->buffer("exp_avg", 1).to_vector();

  OptimizerState missing = good;
  missing.tensors.erase(missing.tensors.begin() + 1);
  CHECK_THROWS_WITH_AS(opt->load_state_dict(missing), "optimizer state: missing tensor 'exp_avg.fc.weight'",
                       CheckpointError);

  OptimizerState wrong_shape = good;
  wrong_shape.tensors[4].second = Tensor::zeros({3, 4});
  CHECK_THROWS_WITH_AS(opt->load_state_dict(wrong_shape),
                       "optimizer state: tensor 'exp_avg_sq.fc.weight' is (3, 4) float32, expected (4, 3) float32",
                       CheckpointError);

  OptimizerState extra = good;
  extra.tensors.emplace_back("exp_avg.lm_head.weight", Tensor::zeros({2}));
  CHECK_THROWS_WITH_AS(opt->load_state_dict(extra),
                       "optimizer state: unexpected tensor 'exp_avg.lm_head.weight' (no parameter of that "
                       "name, or a different optimizer)",
                       CheckpointError);

  auto sgd = make("sgd", make_params(3));
  CHECK_THROWS_WITH_AS(sgd->load_state_dict(good),
                       "optimizer state: the checkpoint holds '\"adamw\"' state but the optimizer is 'sgd'",
                       CheckpointError);

  // A failed load leaves the state untouched, even when some tensors were fine.
  OptimizerState partly = good;
  for (auto& [name, t] : partly.tensors) t = Tensor::full(t.shape(), 5.0);
  partly.tensors.back().second = Tensor::zeros({1});
  CHECK_THROWS_AS(opt->load_state_dict(partly), CheckpointError);
  CHECK(opt->buffer("exp_avg", 1).to_vector() == m_before);
  CHECK(opt->step_count() == 1);
}

TEST_CASE("saved step counts must be integers that fit: the optimizer's step and each parameter's") {
  NamedParameters params = make_params(3);
  auto opt = make("adamw", params);
  for (int k = 0; k < 2; ++k) {
    set_grads(params, k);
    opt->step();
  }
  const OptimizerState good = snapshot(*opt);
  const std::vector<double> m_before = opt->buffer("exp_avg", 1).to_vector();
  auto with = [&](const char* key, const nlohmann::json& value) {
    OptimizerState s = good;
    if (std::string(key) == "step") s.scalars["step"] = value;
    else s.scalars["param_steps"][key] = value;
    return s;
  };
  // 2^64 - 1 read with get<int64_t>() is -1; 1e30 as a float is out of int64's range.
  const nlohmann::json huge = std::numeric_limits<uint64_t>::max();
  CHECK_THROWS_WITH_AS(opt->load_state_dict(with("step", huge)),
                       "optimizer state: 'step' must be an integer >= 0, got 18446744073709551615", CheckpointError);
  CHECK_THROWS_WITH_AS(opt->load_state_dict(with("step", 1e30)),
                       "optimizer state: 'step' must be an integer >= 0, got 1e+30", CheckpointError);
  CHECK_THROWS_WITH_AS(opt->load_state_dict(with("fc.weight", huge)),
                       "optimizer state: the step count of parameter 'fc.weight' must be an integer in [0, 2] "
                       "(the optimizer's step), got 18446744073709551615",
                       CheckpointError);
  CHECK_THROWS_WITH_AS(opt->load_state_dict(with("fc.weight", -1)),
                       "optimizer state: the step count of parameter 'fc.weight' must be an integer in [0, 2] "
                       "(the optimizer's step), got -1",
                       CheckpointError);
  CHECK_THROWS_WITH_AS(opt->load_state_dict(with("fc.bias", 3)),
                       "optimizer state: the step count of parameter 'fc.bias' must be an integer in [0, 2] "
                       "(the optimizer's step), got 3",
                       CheckpointError);
  CHECK_THROWS_WITH_AS(opt->load_state_dict(with("fc.bias", 1.0)),
                       "optimizer state: the step count of parameter 'fc.bias' must be an integer in [0, 2] "
                       "(the optimizer's step), got 1.0",
                       CheckpointError);
  CHECK(opt->buffer("exp_avg", 1).to_vector() == m_before);
  CHECK(opt->step_count() == 2);
  // A parameter that missed a step (no gradient) has a smaller count: that loads.
  opt->load_state_dict(with("fc.bias", 0));
  CHECK(opt->step_count() == 2);
}
