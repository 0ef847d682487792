// state_dict: a Module's parameters saved to and loaded from safetensors, by name, with checks.
#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>

#include "nn/state_dict.h"

using namespace sf;
namespace fs = std::filesystem;

namespace {

// A module with two parameters, filled from `seed` so two instances differ.
struct Toy : Module {
  Tensor weight, bias;
  explicit Toy(uint64_t seed, Shape wshape = {3, 4}) : Module("Toy") {
    Generator gen(seed);
    weight = register_parameter("weight", Tensor::randn(wshape, gen));
    bias = register_parameter("bias", Tensor::randn({3}, gen));
  }
};

// A tied pair like GPT's: head.weight IS body.weight.
struct TiedModel : Module {
  Toy body;
  Tensor head;
  explicit TiedModel(uint64_t seed) : Module("TiedModel"), body(seed) {
    register_module("body", body);
    head = register_parameter("head", body.weight);
  }
};

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / (std::to_string(::getpid()) + "_" + name);
}

std::string error_of(Module& m, const NamedTensors& t) {
  try {
    load_state_dict(m, t, "w.safetensors");
  } catch (const CheckpointError& e) { return e.what(); }
  return "";
}

}  // namespace

TEST_CASE("state_dict: save then load into a fresh module gives the same parameters") {
  Toy a(1), b(2);
  REQUIRE(a.weight.to_vector() != b.weight.to_vector());
  Tensor b_weight_handle = b.weight;
  fs::path p = temp_file("toy.safetensors");
  save_state_dict(a, p.string(), {{"model", "toy"}});
  Metadata meta = load_state_dict(b, p.string());
  CHECK(meta.at("model") == "toy");
  CHECK(b.weight.to_vector() == a.weight.to_vector());
  CHECK(b.bias.to_vector() == a.bias.to_vector());
  CHECK(b.weight.same(b_weight_handle));  // loaded in place: the module's handles are kept
  fs::remove(p);
}

TEST_CASE("state_dict: loading into a flattened module writes through to the flat buffer") {
  Toy a(1), b(2);
  b.flatten_parameters();
  load_state_dict(b, state_dict(a));
  std::vector<double> flat = b.flat_parameters().to_vector();
  std::vector<double> expected = a.weight.to_vector();
  for (double v : a.bias.to_vector()) expected.push_back(v);
  CHECK(flat == expected);
}

TEST_CASE("state_dict: a tied tensor is saved once and loads from either name or both") {
  TiedModel a(1);
  NamedTensors sd = state_dict(a);
  REQUIRE(sd.size() == 2);  // the tied tensor once (under its first name, 'head'), body.bias
  CHECK(sd[0].first == "head");
  CHECK(sd[1].first == "body.bias");

  // the nanoGPT way: both names present with equal values
  TiedModel b(5);
  NamedTensors both = sd;
  both.emplace_back("body.weight", a.body.weight.clone());
  load_state_dict(b, both);
  CHECK(b.body.weight.to_vector() == a.body.weight.to_vector());
  CHECK(b.head.same(b.body.weight));  // still tied

  // only the other name
  TiedModel c(6);
  NamedTensors other_name = {{"body.weight", a.body.weight}, {"body.bias", a.body.bias}};
  load_state_dict(c, other_name);
  CHECK(c.head.to_vector() == a.body.weight.to_vector());

  // both names with different values cannot be loaded into one tensor
  Tensor other = a.body.weight.clone();
  other.data<float>()[0] += 1.0f;
  NamedTensors differ = sd;
  differ.emplace_back("body.weight", other);
  CHECK(error_of(c, differ) ==
        "w.safetensors: tensors 'head' and 'body.weight' are tied in the model but differ in the file");
}

TEST_CASE("state_dict: a missing tensor is named") {
  Toy a(1), b(2);
  NamedTensors sd = state_dict(a);
  sd.erase(sd.begin() + 1);  // drop 'bias'
  CHECK(error_of(b, sd) == "w.safetensors: missing tensor 'bias'");
  TiedModel t(1);
  NamedTensors tied = state_dict(t);
  tied.erase(tied.begin());  // head, also known as body.weight
  CHECK(error_of(t, tied) == "w.safetensors: missing tensor 'head', 'body.weight' (tied)");
  CHECK(error_of(b, {}) == "w.safetensors: missing tensor 'weight' (and 1 more)");
}

TEST_CASE("state_dict: an unexpected extra tensor is named") {
  Toy a(1), b(2);
  NamedTensors sd = state_dict(a);
  sd.emplace_back("transformer.h.0.attn.bias", Tensor::ones({2}));
  CHECK(error_of(b, sd) ==
        "w.safetensors: unexpected tensor 'transformer.h.0.attn.bias' (the model has no parameter "
        "by that name)");
}

TEST_CASE(
    "state_dict: a shape or dtype mismatch names the tensor and both shapes, and changes "
    "nothing") {
  Toy a(1, {4, 3}), b(2);
  std::vector<double> before = b.weight.to_vector();
  CHECK(error_of(b, state_dict(a)) ==
        "w.safetensors: tensor 'weight' has shape (4, 3) in the file but the model's parameter "
        "has shape (3, 4)");
  Toy c(3);
  NamedTensors sd64 = {{"weight", c.weight.to(DType::f64)}, {"bias", c.bias}};
  CHECK(error_of(b, sd64) == "w.safetensors: tensor 'weight' is F64 in the file but the model's parameter is F32");
  CHECK(b.weight.to_vector() == before);  // all checks happen before any copy
  NamedTensors twice = {{"weight", c.weight}, {"weight", c.weight}, {"bias", c.bias}};
  CHECK(error_of(b, twice) == "w.safetensors: tensor 'weight' appears twice");
}

TEST_CASE("state_dict: errors from the file itself name the file") {
  Toy b(2);
  CHECK_THROWS_WITH_AS(load_state_dict(b, "/nonexistent_sf/model.safetensors"),
                       doctest::Contains("/nonexistent_sf/model.safetensors"), CheckpointError);
}
