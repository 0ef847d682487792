// Parity with PyTorch 1.13: each tests/reference/autograd/<op>.json (written by
// tests/reference/gen_autograd_ref.py) holds seeded inputs, the output, weights W and the
// gradients of sum(out * W), in float32 and float64. We run the same op, call out.backward(W)
// and compare every value with |ours - torch| <= tol * max(1, |torch|):
// tol = 1e-5 in float32, 1e-10 in float64 (relative for values above 1, absolute below).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "autograd/graph.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"

using namespace sf;
using json = nlohmann::json;
using OpFn = std::function<Tensor(const std::vector<Tensor>&, const json&)>;

static const std::string kDir = std::string(SF_SOURCE_DIR) + "/tests/reference/autograd";

static Shape shape_of(const json& j) { return j.get<Shape>(); }
static IntTensor ints(const json& j) {
  return IntTensor(j["shape"].get<Shape>(), j["values"].get<std::vector<int32_t>>());
}

// How each reference op is computed here, from its inputs and params.
static const std::map<std::string, OpFn>& op_table() {
  static const std::map<std::string, OpFn> table = {
      {"add", [](auto& x, auto&) { return add(x[0], x[1]); }},
      {"sub", [](auto& x, auto&) { return sub(x[0], x[1]); }},
      {"mul", [](auto& x, auto&) { return mul(x[0], x[1]); }},
      {"div", [](auto& x, auto&) { return div(x[0], x[1]); }},
      {"add_broadcast_2x3_3", [](auto& x, auto&) { return x[0] + x[1]; }},
      {"sub_broadcast_scalar_lhs", [](auto& x, auto&) { return x[0] - x[1]; }},
      {"mul_broadcast_2x1x4_3x1", [](auto& x, auto&) { return x[0] * x[1]; }},
      {"div_broadcast_2x3x1_1x1x4", [](auto& x, auto&) { return x[0] / x[1]; }},
      {"neg", [](auto& x, auto&) { return neg(x[0]); }},
      {"pow", [](auto& x, auto& p) { return pow(x[0], p["exponent"].template get<double>()); }},
      {"pow_int", [](auto& x, auto& p) { return pow(x[0], p["exponent"].template get<double>()); }},
      {"exp", [](auto& x, auto&) { return exp(x[0]); }},
      {"log", [](auto& x, auto&) { return log(x[0]); }},
      {"sqrt", [](auto& x, auto&) { return sqrt(x[0]); }},
      {"tanh", [](auto& x, auto&) { return tanh(x[0]); }},
      {"sigmoid", [](auto& x, auto&) { return sigmoid(x[0]); }},
      {"relu", [](auto& x, auto&) { return relu(x[0]); }},
      {"gelu", [](auto& x, auto&) { return gelu(x[0]); }},
      {"gelu_tanh", [](auto& x, auto&) { return gelu(x[0], GeluApprox::tanh); }},
      {"to", [](auto& x, auto&) { return x[0].to(x[0].dtype() == DType::f32 ? DType::f64 : DType::f32); }},
      {"sum_all", [](auto& x, auto&) { return sum(x[0]); }},
      {"sum_axes",
       [](auto& x, auto& p) {
         return sum(x[0], p["axes"].template get<std::vector<int64_t>>(), p["keepdim"].template get<bool>());
       }},
      {"sum_axis_last",
       [](auto& x, auto& p) {
         return sum(x[0], p["axes"].template get<std::vector<int64_t>>(), p["keepdim"].template get<bool>());
       }},
      {"sum_axes_size1",
       [](auto& x, auto& p) {
         return sum(x[0], p["axes"].template get<std::vector<int64_t>>(), p["keepdim"].template get<bool>());
       }},
      {"mean_all_size1", [](auto& x, auto&) { return mean(x[0]); }},
      {"max_axis_size1",
       [](auto& x, auto& p) {
         return max(x[0], p["axis"].template get<int64_t>(), p["keepdim"].template get<bool>());
       }},
      {"mean_all", [](auto& x, auto&) { return mean(x[0]); }},
      {"mean_axes",
       [](auto& x, auto& p) {
         return mean(x[0], p["axes"].template get<std::vector<int64_t>>(), p["keepdim"].template get<bool>());
       }},
      {"max_axis",
       [](auto& x, auto& p) {
         return max(x[0], p["axis"].template get<int64_t>(), p["keepdim"].template get<bool>());
       }},
      {"max_axis_keepdim",
       [](auto& x, auto& p) {
         return max(x[0], p["axis"].template get<int64_t>(), p["keepdim"].template get<bool>());
       }},
      {"sum_to", [](auto& x, auto& p) { return sum_to(x[0], shape_of(p["shape"])); }},
      {"expand", [](auto& x, auto& p) { return expand(x[0], shape_of(p["shape"])); }},
      {"reshape", [](auto& x, auto& p) { return reshape(x[0], shape_of(p["shape"])); }},
      {"transpose",
       [](auto& x, auto& p) {
         return transpose(x[0], p["axis0"].template get<int64_t>(), p["axis1"].template get<int64_t>());
       }},
      {"permute", [](auto& x, auto& p) { return permute(x[0], p["axes"].template get<std::vector<int64_t>>()); }},
      {"slice_step", [](auto& x, auto& p) { return slice(x[0], p["axis"], p["start"], p["end"], p["step"]); }},
      {"slice_negative", [](auto& x, auto& p) { return slice(x[0], p["axis"], p["start"], p["end"], p["step"]); }},
      {"concat",
       [](auto& x, auto& p) {
         return concat({x[0], x[1]}, p["axis"].template get<int64_t>());
       }},
      {"matmul",
       [](auto& x, auto& p) {
         return matmul(x[0], x[1], Transposed{p["trans_a"].template get<bool>(), p["trans_b"].template get<bool>()});
       }},
      {"matmul_trans_a",
       [](auto& x, auto& p) {
         return matmul(x[0], x[1], Transposed{p["trans_a"].template get<bool>(), p["trans_b"].template get<bool>()});
       }},
      {"matmul_trans_b",
       [](auto& x, auto& p) {
         return matmul(x[0], x[1], Transposed{p["trans_a"].template get<bool>(), p["trans_b"].template get<bool>()});
       }},
      {"matmul_trans_ab",
       [](auto& x, auto& p) {
         return matmul(x[0], x[1], Transposed{p["trans_a"].template get<bool>(), p["trans_b"].template get<bool>()});
       }},
      {"matmul_batched_broadcast",
       [](auto& x, auto& p) {
         return matmul(x[0], x[1], Transposed{p["trans_a"].template get<bool>(), p["trans_b"].template get<bool>()});
       }},
      {"matmul_batched_2d_rhs",
       [](auto& x, auto& p) {
         return matmul(x[0], x[1], Transposed{p["trans_a"].template get<bool>(), p["trans_b"].template get<bool>()});
       }},
      {"matmul_batched_2d_rhs_trans_b",
       [](auto& x, auto& p) {
         return matmul(x[0], x[1], Transposed{p["trans_a"].template get<bool>(), p["trans_b"].template get<bool>()});
       }},
      {"linear", [](auto& x, auto&) { return linear(x[0], x[1], x[2]); }},
      {"linear_no_bias", [](auto& x, auto&) { return linear(x[0], x[1]); }},
      {"softmax", [](auto& x, auto& p) { return softmax(x[0], p["axis"].template get<int64_t>()); }},
      {"softmax_axis1", [](auto& x, auto& p) { return softmax(x[0], p["axis"].template get<int64_t>()); }},
      {"log_softmax", [](auto& x, auto& p) { return log_softmax(x[0], p["axis"].template get<int64_t>()); }},
      {"log_softmax_axis0", [](auto& x, auto& p) { return log_softmax(x[0], p["axis"].template get<int64_t>()); }},
      {"masked_fill",
       [](auto& x, auto& p) {
         const json& m = p["mask"];
         Tensor mask =
             Tensor::from_vector(m["values"].template get<std::vector<double>>(), shape_of(m["shape"]), x[0].dtype());
         return masked_fill(x[0], mask, p["value"].template get<double>());
       }},
      {"embedding", [](auto& x, auto& p) { return embedding(x[0], ints(p["ids"])); }},
      {"cross_entropy",
       [](auto& x, auto& p) {
         return cross_entropy(x[0], ints(p["targets"]), p["ignore_index"], p["label_smoothing"]);
       }},
      {"cross_entropy_ignore",
       [](auto& x, auto& p) {
         return cross_entropy(x[0], ints(p["targets"]), p["ignore_index"], p["label_smoothing"]);
       }},
      {"cross_entropy_smoothing",
       [](auto& x, auto& p) {
         return cross_entropy(x[0], ints(p["targets"]), p["ignore_index"], p["label_smoothing"]);
       }},
      {"cross_entropy_ignore_smoothing",
       [](auto& x, auto& p) {
         return cross_entropy(x[0], ints(p["targets"]), p["ignore_index"], p["label_smoothing"]);
       }},
      {"layer_norm", [](auto& x, auto& p) { return layer_norm(x[0], x[1], x[2], p["eps"].template get<double>()); }},
      {"layer_norm_no_affine",
       [](auto& x, auto& p) { return layer_norm(x[0], Tensor(), Tensor(), p["eps"].template get<double>()); }},
      {"attention",
       [](auto& x, auto& p) {
         AttentionOptions opt;
         opt.causal = p["causal"];
         return attention(x[0], x[1], x[2], opt);
       }},
      {"attention_causal",
       [](auto& x, auto& p) {
         AttentionOptions opt;
         opt.causal = p["causal"];
         return attention(x[0], x[1], x[2], opt);
       }},
  };
  return table;
}

static std::vector<std::string> reference_ops() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kDir)) {
    std::string stem = entry.path().stem().string();
    if (entry.path().extension() == ".json" && stem != "lowp") names.push_back(stem);
  }
  std::sort(names.begin(), names.end());
  return names;
}

static Tensor load(const json& j, DType dtype) {
  return Tensor::from_vector(j["values"].get<std::vector<double>>(), shape_of(j["shape"]), dtype);
}

static DType dtype_named(const std::string& s) { return s == "float64" ? DType::f64 : DType::f32; }

// Every element of `ours` within tol * max(1, |ref|) of the reference; names the first miss.
static void check_close(const Tensor& ours, const json& ref, double tol, const std::string& what) {
  INFO(what);
  REQUIRE(ours.defined());
  REQUIRE(ours.shape() == shape_of(ref["shape"]));
  std::vector<double> a = ours.to_vector(), b = ref["values"].get<std::vector<double>>();
  REQUIRE(a.size() == b.size());
  size_t bad = a.size();
  for (size_t i = 0; i < a.size() && bad == a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= tol * std::max(1.0, std::fabs(b[i])))) bad = i;
  if (bad < a.size()) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "element %zu: ours %.17g vs torch %.17g", bad, a[bad], b[bad]);
    INFO(msg);
    CHECK(false);
  }
}

TEST_CASE("PyTorch parity: every reference op has an implementation here and vice versa") {
  std::vector<std::string> files = reference_ops();
  std::set<std::string> file_set(files.begin(), files.end());
  for (const std::string& name : files) {
    INFO("reference file " << name << ".json");
    CHECK(op_table().count(name) == 1);
  }
  for (const auto& [name, fn] : op_table()) {
    INFO("op " << name);
    CHECK(file_set.count(name) == 1);
  }
  CHECK(files.size() >= 50);
}

TEST_CASE("PyTorch parity: outputs and gradients, float32 and float64") {
  for (const std::string& name : reference_ops()) {
    if (!op_table().count(name)) continue;  // reported by the test above
    std::ifstream in(kDir + "/" + name + ".json");
    json data = json::parse(in);
    for (const json& c : data["cases"]) {
      std::string dtype_s = c["dtype"];
      SUBCASE((name + " " + dtype_s).c_str()) {
        DType dtype = dtype_named(dtype_s);
        double tol = dtype == DType::f64 ? 1e-10 : 1e-5;
        std::vector<Tensor> inputs;
        for (size_t i = 0; i < c["inputs"].size(); ++i) {
          Tensor t = load(c["inputs"][i], dtype);
          if (!c["grads"][i].is_null()) t.requires_grad_();
          inputs.push_back(t);
        }
        Tensor out = op_table().at(name)(inputs, data["params"]);
        check_close(out, c["output"], tol, name + " " + dtype_s + " output");
        out.backward(load(c["weights"], out.dtype()));
        for (size_t i = 0; i < inputs.size(); ++i)
          if (!c["grads"][i].is_null())
            check_close(inputs[i].grad(), c["grads"][i], tol,
                        name + " " + dtype_s + " gradient of input " + std::to_string(i));
      }
    }
  }
}
