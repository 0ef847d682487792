// Tests of the Module base: names, tying, modes, flat buffers, to(f64), summary.
#include <doctest/doctest.h>

#include "autograd/graph.h"
#include "autograd/ops.h"
#include "nn/module.h"

using namespace sf;

namespace {
struct Leaf : Module {
  Tensor weight, bias;
  Leaf(int64_t out, int64_t in) : Module("Leaf") {
    Generator gen(1);
    weight = register_parameter("weight", Tensor::randn({out, in}, gen));
    bias = register_parameter("bias", Tensor::zeros({out}));
  }
};
struct Tree : Module {
  Leaf a{3, 2}, b{2, 3};
  ModuleList<Leaf> blocks;
  Tree() : Module("Tree") {
    register_module("a", a);
    register_module("h", blocks);
    blocks.append(std::make_unique<Leaf>(2, 2));
    blocks.append(std::make_unique<Leaf>(2, 2));
    register_module("b", b);
  }
};
}  // namespace

TEST_CASE("module base: dotted names in registration order") {
  Tree t;
  auto named = t.named_parameters();
  std::vector<std::string> names;
  for (auto& [n, p] : named) names.push_back(n);
  CHECK(names == std::vector<std::string>{"a.weight", "a.bias", "h.0.weight", "h.0.bias", "h.1.weight", "h.1.bias",
                                          "b.weight", "b.bias"});
  CHECK(t.num_parameters() == 6 + 3 + 2 * (4 + 2) + 6 + 2);
  CHECK(t.parameter("h.1.bias").same(t.blocks[1].bias));
  CHECK_THROWS_AS(t.parameter("h.2.bias"), ConfigError);
}

TEST_CASE("module base: a tied tensor is listed and counted once") {
  Tree t;
  int64_t before = t.num_parameters();
  // Tie b.weight to a.weight's transpose-shaped twin: register a.weight a second time.
  struct Tied : Module {
    Leaf a{2, 2};
    Tensor alias;
    Tied() : Module("Tied") {
      register_module("a", a);
      alias = register_parameter("head", a.weight);
    }
  } tied;
  CHECK(tied.named_parameters().size() == 2);
  CHECK(tied.named_parameters(false).size() == 3);
  CHECK(tied.num_parameters() == 6);
  CHECK(before == t.num_parameters());
  CHECK(tied.summary().find("1 tied") != std::string::npos);
}

TEST_CASE("module base: train/eval recurse") {
  Tree t;
  CHECK(t.training());
  t.eval();
  CHECK(!t.training());
  CHECK(!t.blocks[1].training());
  t.train();
  CHECK(t.a.training());
}

TEST_CASE("module base: flatten keeps values, identity and gradients land in one buffer") {
  Tree t;
  std::vector<double> before = t.a.weight.to_vector();
  Tensor handle = t.a.weight;
  t.flatten_parameters();
  REQUIRE(t.is_flat());
  CHECK(handle.same(t.a.weight));
  CHECK(t.a.weight.to_vector() == before);
  CHECK(t.flat_parameters().numel() == t.num_parameters());
  // A backward accumulates into the flat gradient buffer.
  Tensor x = Tensor::ones({1, 2});
  Tensor y = sum(linear(x, t.a.weight, t.a.bias));
  y.backward();
  double total = 0;
  for (double g : t.flat_grads().to_vector()) total += g;
  CHECK(total == doctest::Approx(6.0 + 3.0));  // d/dW = 1 (3x2 of ones), d/db = 1
  t.zero_grad();
  for (double g : t.flat_grads().to_vector()) CHECK(g == 0.0);
  // Writing through the flat view changes the parameter.
  t.flat_parameters().data<float>()[0] = 42.0f;
  CHECK(t.a.weight.at({0, 0}) == 42.0);
}

TEST_CASE("module base: to(float64) converts in place, keeps names and flatness") {
  Tree t;
  t.flatten_parameters();
  std::vector<double> before = t.b.weight.to_vector();
  Tensor handle = t.b.weight;
  t.to(DType::f64);
  CHECK(t.dtype() == DType::f64);
  CHECK(handle.dtype() == DType::f64);
  CHECK(t.b.weight.to_vector() == before);
  CHECK(t.is_flat());
  CHECK(t.flat_parameters().dtype() == DType::f64);
  Tensor y = sum(t.b.weight);
  y.backward();
  CHECK(t.b.weight.grad().dtype() == DType::f64);
}

TEST_CASE("module base: summary shows the tree, shapes and counts") {
  Tree t;
  std::string s = t.summary();
  CHECK(s.find("Tree") == 0);
  CHECK(s.find("(h): ModuleList") != std::string::npos);
  CHECK(s.find("(0): Leaf  weight (2, 2), bias (2)  [6]") != std::string::npos);
  CHECK(s.find("parameters: 29 in 8 tensors") != std::string::npos);
}

TEST_CASE("module base: format_count") {
  CHECK(format_count(0) == "0");
  CHECK(format_count(999) == "999");
  CHECK(format_count(1000) == "1,000");
  CHECK(format_count(2359296) == "2,359,296");
}
