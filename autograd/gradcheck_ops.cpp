// gradcheck_ops.cpp: the registry of gradient checks, one per op in ops.h and per variant that
// takes a different path through its kernels (broadcasting patterns, repeated inputs, axes,
// keepdim, BLAS transpose flags, ignore_index, ...). Inputs are seeded float64 tensors, so every
// run checks the same numbers.
#include <cmath>

#include "autograd/checkpoint.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"

namespace sf {
namespace {

using Inputs = std::vector<Tensor>;
using Fn = std::function<Tensor(const Inputs&)>;

// How an input's values are drawn. Values are kept where each op is smooth: `away` keeps
// |x| >= 0.2 so relu's kink (and max's ties) are never within eps of an input.
enum class Init { any, positive, away };

struct In {
  Shape shape;
  Init init = Init::any;
};

Tensor make_input(const In& spec, Generator& gen) {
  Tensor t = Tensor::empty(spec.shape, DType::f64);
  double* p = t.data<double>();
  for (int64_t k = 0, n = t.numel(); k < n; ++k) {
    double u = gen.uniform();
    switch (spec.init) {
      case Init::any: p[k] = 2 * u - 1; break;           // [-1, 1)
      case Init::positive: p[k] = 0.5 + 1.5 * u; break;  // [0.5, 2)
      case Init::away: p[k] = (u < 0.5 ? -1 : 1) * (0.2 + 1.6 * std::fabs(u - 0.5)); break;
    }
  }
  return t.requires_grad_();
}

struct Registry {
  std::vector<GradcheckCase> cases;
  uint64_t seed = 1;

  void add(const std::string& group, const std::string& name, std::vector<In> specs, Fn f, GradcheckOptions opt = {}) {
    uint64_t s = seed++;
    cases.push_back({group, name, [specs, f, opt, s]() {
                       Generator gen(1000 + s);
                       Inputs inputs;
                       for (const In& spec : specs) inputs.push_back(make_input(spec, gen));
                       return gradcheck(f, inputs, opt);
                     }});
  }
};

using BinaryOp = Tensor (*)(const Tensor&, const Tensor&);

void elementwise(Registry& r) {
  const Shape s{2, 3};
  r.add("elementwise", "add", {{s}, {s}}, [](const Inputs& x) { return add(x[0], x[1]); });
  r.add("elementwise", "sub", {{s}, {s}}, [](const Inputs& x) { return sub(x[0], x[1]); });
  r.add("elementwise", "mul", {{s}, {s}}, [](const Inputs& x) { return mul(x[0], x[1]); });
  r.add("elementwise", "div", {{s}, {s, Init::positive}}, [](const Inputs& x) { return div(x[0], x[1]); });
  r.add("elementwise", "neg", {{s}}, [](const Inputs& x) { return neg(x[0]); });
  r.add("elementwise", "pow 3", {{s}}, [](const Inputs& x) { return pow(x[0], 3.0); });
  r.add("elementwise", "pow 2.5", {{s, Init::positive}}, [](const Inputs& x) { return pow(x[0], 2.5); });
  r.add("elementwise", "pow -1.5", {{s, Init::positive}}, [](const Inputs& x) { return pow(x[0], -1.5); });
  r.add("elementwise", "pow 0", {{s}}, [](const Inputs& x) { return pow(x[0], 0.0); });
  r.add("elementwise", "exp", {{s}}, [](const Inputs& x) { return exp(x[0]); });
  r.add("elementwise", "log", {{s, Init::positive}}, [](const Inputs& x) { return log(x[0]); });
  r.add("elementwise", "sqrt", {{s, Init::positive}}, [](const Inputs& x) { return sqrt(x[0]); });
  r.add("elementwise", "tanh", {{s}}, [](const Inputs& x) { return tanh(x[0]); });
  r.add("elementwise", "sigmoid", {{s}}, [](const Inputs& x) { return sigmoid(x[0]); });
  r.add("elementwise", "relu", {{s, Init::away}}, [](const Inputs& x) { return relu(x[0]); });
  r.add("elementwise", "gelu erf", {{{3, 4}}}, [](const Inputs& x) { return gelu(x[0] * 3.0); });
  r.add("elementwise", "gelu tanh", {{{3, 4}}}, [](const Inputs& x) { return gelu(x[0] * 3.0, GeluApprox::tanh); });
  r.add("elementwise", "scalar operators 2.5*x + 1 - x/4", {{s}},
        [](const Inputs& x) { return 2.5 * x[0] + 1.0 - x[0] / 4.0; });
  r.add("elementwise", "scalar operators 1/x and 3-x", {{s, Init::positive}},
        [](const Inputs& x) { return 1.0 / x[0] + (3.0 - x[0]) * 2.0; });
  // The differentiable cast: float64 -> float32 -> float64. The float32 leg rounds to 6e-8, so
  // this one case steps by eps = 1e-2 (the map is linear: a larger step adds no truncation error).
  GradcheckOptions cast_opt;
  cast_opt.eps = 1e-2;
  r.add(
      "elementwise", "to float32 and back", {{s}},
      [](const Inputs& x) { return (x[0].to(DType::f32) * 3.0).to(DType::f64); }, cast_opt);
}

void broadcasting(Registry& r) {
  struct Op {
    const char* name;
    BinaryOp f;
  };
  const Op ops[] = {{"add", add}, {"sub", sub}, {"mul", mul}, {"div", div}};
  struct Pattern {
    Shape a, b;
  };
  const Pattern patterns[] = {{{2, 3}, {3}}, {{3}, {2, 3}}, {{2, 1, 4}, {3, 1}},
                              {{2, 3}, {}},  {{}, {2, 3}},  {{2, 3, 1}, {1, 1, 4}}};
  for (const Op& op : ops)
    for (const Pattern& p : patterns) {
      Init init_b = op.f == div ? Init::positive : Init::any;  // keep denominators off zero
      r.add("broadcast", std::string(op.name) + " " + shape_str(p.a) + " " + shape_str(p.b), {{p.a}, {p.b, init_b}},
            [f = op.f](const Inputs& x) { return f(x[0], x[1]); });
    }
}

void repeated(Registry& r) {
  r.add("repeated input", "x * x", {{{2, 3}}}, [](const Inputs& x) { return x[0] * x[0]; });
  r.add("repeated input", "x + x", {{{2, 3}}}, [](const Inputs& x) { return x[0] + x[0]; });
  r.add("repeated input", "x / x + x * x * x", {{{2, 3}, Init::positive}},
        [](const Inputs& x) { return x[0] / x[0] + x[0] * x[0] * x[0]; });
  r.add("repeated input", "matmul(x, x)", {{{3, 3}}}, [](const Inputs& x) { return matmul(x[0], x[0]); });
  r.add("repeated input", "matmul(x, x^T)", {{{3, 4}}}, [](const Inputs& x) { return matmul_bt(x[0], x[0]); });
  r.add("repeated input", "sum(x) * x", {{{2, 3}}}, [](const Inputs& x) { return sum(x[0]) * x[0]; });
  r.add("repeated input", "concat(x, x)", {{{2, 3}}}, [](const Inputs& x) { return concat({x[0], x[0]}, 1); });
  r.add("repeated input", "linear(x, x) with x as input and weight", {{{3, 3}}},
        [](const Inputs& x) { return linear(x[0], x[0]); });
}

void reductions(Registry& r) {
  const Shape s{2, 3, 4};
  r.add("reduce", "sum all", {{s}}, [](const Inputs& x) { return sum(x[0]); });
  for (bool keep : {false, true}) {
    std::string k = keep ? " keepdim" : "";
    r.add("reduce", "sum axis 0" + k, {{s}}, [keep](const Inputs& x) { return sum(x[0], 0, keep); });
    r.add("reduce", "sum axis -1" + k, {{s}}, [keep](const Inputs& x) { return sum(x[0], -1, keep); });
    r.add("reduce", "sum axes (0, 2)" + k, {{s}}, [keep](const Inputs& x) { return sum(x[0], {0, 2}, keep); });
    r.add("reduce", "mean axis 1" + k, {{s}}, [keep](const Inputs& x) { return mean(x[0], 1, keep); });
    r.add("reduce", "mean axes (2, 0)" + k, {{s}}, [keep](const Inputs& x) { return mean(x[0], {2, 0}, keep); });
    for (int64_t axis : {0, 1, -1})
      r.add("reduce", "max axis " + std::to_string(axis) + k, {{s, Init::away}},
            [keep, axis](const Inputs& x) { return max(x[0], axis, keep); });
  }
  r.add("reduce", "mean all", {{s}}, [](const Inputs& x) { return mean(x[0]); });
  // reduced axes of size 1 (dropped without keepdim all the same)
  r.add("reduce", "sum axes (0, 2) of (1,3,1)", {{{1, 3, 1}}}, [](const Inputs& x) { return sum(x[0], {0, 2}); });
  r.add("reduce", "max axis 0 of (1,4)", {{{1, 4}}}, [](const Inputs& x) { return max(x[0], 0); });
  r.add("reduce", "mean all of (1,1)", {{{1, 1}}}, [](const Inputs& x) { return mean(x[0]); });
  r.add("reduce", "sum_to (2,3,4) -> (3,1)", {{s}}, [](const Inputs& x) { return sum_to(x[0], {3, 1}); });
  r.add("reduce", "sum_to (2,3,4) -> (4)", {{s}}, [](const Inputs& x) { return sum_to(x[0], {4}); });
  r.add("reduce", "sum_to (2,3,4) -> (2,1,4)", {{s}}, [](const Inputs& x) { return sum_to(x[0], {2, 1, 4}); });
  r.add("reduce", "expand (3,1) -> (2,3,4)", {{{3, 1}}}, [](const Inputs& x) { return expand(x[0], {2, 3, 4}); });
  r.add("reduce", "expand (4) -> (2,3,4)", {{{4}}}, [](const Inputs& x) { return expand(x[0], {2, 3, 4}); });
  r.add("reduce", "expand () -> (2,3)", {{{}}}, [](const Inputs& x) { return expand(x[0], {2, 3}); });
}

void shapes(Registry& r) {
  const Shape s{2, 3, 4};
  // reshape shares the input's buffer: multiply afterwards so the output is a fresh tensor too.
  r.add("shape", "reshape (2,3,4) -> (4,-1)", {{s}}, [](const Inputs& x) { return reshape(x[0], {4, -1}); });
  r.add("shape", "reshape -> (-1) then * 2", {{s}}, [](const Inputs& x) { return reshape(x[0], {-1}) * 2.0; });
  r.add("shape", "reshape (6,4) then (2,12)", {{s}}, [](const Inputs& x) {
    return reshape(reshape(x[0], {6, 4}) * 2.0, {2, 12});
  });
  r.add("shape", "transpose(0, 2)", {{s}}, [](const Inputs& x) { return transpose(x[0], 0, 2); });
  r.add("shape", "transpose(-1, -2)", {{s}}, [](const Inputs& x) { return transpose(x[0], -1, -2); });
  r.add("shape", "permute (2,0,1)", {{s}}, [](const Inputs& x) { return permute(x[0], {2, 0, 1}); });
  r.add("shape", "permute (1,0,3,2) of (2,3,4,1)", {{{2, 3, 4, 1}}}, [](const Inputs& x) {
    return permute(x[0], {1, 0, 3, 2});
  });
  r.add("shape", "slice axis 1 [0:5:2]", {{{2, 5, 3}}}, [](const Inputs& x) { return slice(x[0], 1, 0, 5, 2); });
  r.add("shape", "slice axis -1 [-4:-1]", {{{2, 5}}}, [](const Inputs& x) { return slice(x[0], -1, -4, -1); });
  r.add("shape", "slice axis 0 [1:100:3] (end clamped)", {{{7, 2}}},
        [](const Inputs& x) { return slice(x[0], 0, 1, 100, 3); });
  r.add("shape", "slice axis 2 [-3:4:2]", {{{2, 3, 5}}}, [](const Inputs& x) { return slice(x[0], 2, -3, 4, 2); });
  for (int64_t axis : {0, 1, 2}) {
    Shape a{2, 3, 4}, b{2, 3, 4};
    a[axis] = 1;
    b[axis] = 3;
    r.add("shape", "concat axis " + std::to_string(axis) + " " + shape_str(a) + " " + shape_str(b) + " " + shape_str(s),
          {{a}, {b}, {s}}, [axis](const Inputs& x) {
            return concat({x[0], x[1], x[2]}, axis);
          });
  }
  r.add("shape", "concat axis -1 of two", {{{3, 2}}, {{3, 1}}}, [](const Inputs& x) {
    return concat({x[0], x[1]}, -1);
  });
}

void matmuls(Registry& r) {
  r.add("matmul", "(3,4) @ (4,5)", {{{3, 4}}, {{4, 5}}}, [](const Inputs& x) { return matmul(x[0], x[1]); });
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      std::string flags = std::string(" trans_a=") + (ta ? "1" : "0") + " trans_b=" + (tb ? "1" : "0");
      Shape a = ta ? Shape{4, 3} : Shape{3, 4}, b = tb ? Shape{5, 4} : Shape{4, 5};
      r.add("matmul", "2-D" + flags, {{a}, {b}}, [ta, tb](const Inputs& x) {
        return matmul(x[0], x[1], Transposed{ta, tb});
      });
      // broadcast batch dims: (2,1) with (3) -> (2,3)
      Shape ba = ta ? Shape{2, 1, 4, 3} : Shape{2, 1, 3, 4}, bb = tb ? Shape{3, 5, 4} : Shape{3, 4, 5};
      r.add("matmul", "batched (2,1)x(3) broadcast" + flags, {{ba}, {bb}}, [ta, tb](const Inputs& x) {
        return matmul(x[0], x[1], Transposed{ta, tb});
      });
    }
  r.add("matmul", "batched (2,3,4) @ (2,4,5)", {{{2, 3, 4}}, {{2, 4, 5}}},
        [](const Inputs& x) { return matmul(x[0], x[1]); });
  r.add("matmul", "batched (2,3,4) @ 2-D (4,5)", {{{2, 3, 4}}, {{4, 5}}},
        [](const Inputs& x) { return matmul(x[0], x[1]); });
  r.add("matmul", "matmul_bt: batched (2,3,4) @ 2-D (5,4)^T", {{{2, 3, 4}}, {{5, 4}}},
        [](const Inputs& x) { return matmul_bt(x[0], x[1]); });
  r.add("matmul", "matmul_at: batched (2,4,3)^T @ 2-D (4,5)", {{{2, 4, 3}}, {{4, 5}}},
        [](const Inputs& x) { return matmul_at(x[0], x[1]); });
  r.add("matmul", "2-D (3,4) @ batched (2,4,5)", {{{3, 4}}, {{2, 4, 5}}},
        [](const Inputs& x) { return matmul(x[0], x[1]); });
  for (bool with_bias : {true, false})
    // (2, 260, 3): 520 rows, enough for linear's panel backward (two chunks of 272 and 248 rows)
    for (const Shape& xs : {Shape{3}, Shape{4, 3}, Shape{2, 4, 3}, Shape{2, 260, 3}}) {
      std::vector<In> in{{xs}, {{5, 3}}};
      if (with_bias) in.push_back({{5}});
      r.add("matmul", "linear x " + shape_str(xs) + (with_bias ? " with bias" : " without bias"), in,
            [with_bias](const Inputs& x) { return linear(x[0], x[1], with_bias ? x[2] : Tensor()); });
      for (GeluApprox approx : {GeluApprox::none, GeluApprox::tanh})
        r.add("matmul",
              std::string("linear_gelu ") + (approx == GeluApprox::tanh ? "tanh" : "erf") + " x " + shape_str(xs) +
                  (with_bias ? " with bias" : " without bias"),
              in, [with_bias, approx](const Inputs& x) {
                return linear_gelu(x[0] * 3.0, x[1], with_bias ? x[2] : Tensor(), approx);
              });
    }
}

void nn_ops(Registry& r) {
  const Shape s{2, 3, 4};
  for (int64_t axis : {-1, 0, 1}) {
    r.add("nn", "softmax axis " + std::to_string(axis), {{s}},
          [axis](const Inputs& x) { return softmax(x[0] * 2.0, axis); });
    r.add("nn", "log_softmax axis " + std::to_string(axis), {{s}},
          [axis](const Inputs& x) { return log_softmax(x[0] * 2.0, axis); });
  }
  r.add("nn", "masked_fill mask (2,3,4)", {{s}}, [](const Inputs& x) {
    Tensor mask = Tensor::from_vector({1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 1},
                                      {2, 3, 4}, DType::f64);
    return masked_fill(x[0], mask, -5.0);
  });
  r.add("nn", "masked_fill broadcast mask (3,1)", {{s}}, [](const Inputs& x) {
    return masked_fill(x[0], Tensor::from_vector({0, 1, 0}, {3, 1}, DType::f64), 2.0);
  });
  r.add("nn", "masked_fill causal mask (3,3) on (2,3,3)", {{{2, 3, 3}}}, [](const Inputs& x) {
    Tensor causal = Tensor::from_vector({0, 1, 1, 0, 0, 1, 0, 0, 0}, {3, 3}, DType::f32);  // float32 mask
    return softmax(masked_fill(x[0], causal, -INFINITY), -1);
  });
  // dropout: the generator is reseeded inside f, so every evaluation draws the same mask.
  r.add("nn", "dropout p=0.3 training (seeded)", {{{4, 5}}}, [](const Inputs& x) {
    Generator gen(7);
    return dropout(x[0], 0.3, true, gen);
  });
  r.add("nn", "dropout eval (identity)", {{{4, 5}}}, [](const Inputs& x) {
    Generator gen(7);
    return dropout(x[0], 0.3, false, gen) * 1.0;
  });
  r.add("nn", "embedding with repeated ids", {{{5, 3}}}, [](const Inputs& x) {
    return embedding(x[0], IntTensor({2, 4}, {1, 3, 1, 0, 3, 3, 4, 1}));
  });
  r.add("nn", "cross_entropy (4,5)", {{{4, 5}}}, [](const Inputs& x) {
    return cross_entropy(x[0] * 3.0, IntTensor({4}, {1, 0, 4, 2}));
  });
  r.add("nn", "cross_entropy (2,3,5) logits", {{{2, 3, 5}}}, [](const Inputs& x) {
    return cross_entropy(x[0] * 3.0, IntTensor({2, 3}, {1, 0, 4, 2, 2, 3}));
  });
  r.add("nn", "cross_entropy ignore_index", {{{4, 5}}}, [](const Inputs& x) {
    return cross_entropy(x[0] * 3.0, IntTensor({4}, {1, -100, 4, -100}));
  });
  r.add("nn", "cross_entropy ignore_index=2 (a valid class)", {{{4, 5}}}, [](const Inputs& x) {
    return cross_entropy(x[0] * 3.0, IntTensor({4}, {1, 2, 4, 2}), 2);
  });
  r.add("nn", "cross_entropy label_smoothing 0.1", {{{4, 5}}}, [](const Inputs& x) {
    return cross_entropy(x[0] * 3.0, IntTensor({4}, {1, 0, 4, 2}), -100, 0.1);
  });
  r.add("nn", "cross_entropy ignore_index + label_smoothing 0.2", {{{4, 5}}}, [](const Inputs& x) {
    return cross_entropy(x[0] * 3.0, IntTensor({4}, {1, -100, 4, 0}), -100, 0.2);
  });
  const Shape ln{2, 3, 5};
  r.add("nn", "layer_norm with weight and bias", {{ln}, {{5}}, {{5}}},
        [](const Inputs& x) { return layer_norm(x[0], x[1], x[2]); });
  r.add("nn", "layer_norm weight only", {{ln}, {{5}}},
        [](const Inputs& x) { return layer_norm(x[0], x[1], Tensor()); });
  r.add("nn", "layer_norm bias only", {{ln}, {{5}}}, [](const Inputs& x) { return layer_norm(x[0], Tensor(), x[1]); });
  r.add("nn", "layer_norm no parameters, 2-D", {{{4, 6}}},
        [](const Inputs& x) { return layer_norm(x[0], Tensor(), Tensor()); });
  r.add("nn", "layer_norm eps 0.1", {{ln}, {{5}}, {{5}}},
        [](const Inputs& x) { return layer_norm(x[0], x[1], x[2], 0.1); });
}

// Every attention case runs on both kernels: "stored" keeps P, "tiled" recomputes it from the
// log-sum-exp (the tiled cases' names say so).
void attention_ops(Registry& r, AttentionKernel kernel) {
  const std::string tag = kernel == AttentionKernel::tiled ? "tiled, " : "";
  // q (B, H, T, D) = (2, 2, 3, 4); k, v (B, H, S, D) with S = 3 (or 5 when T != S).
  const Shape q{2, 2, 3, 4}, kv{2, 2, 3, 4}, kv5{2, 2, 5, 4};
  auto attn = [kernel](AttentionOptions opt) {
    opt.kernel = kernel;
    return [opt](const Inputs& x) { return attention(x[0], x[1], x[2], opt); };
  };
  AttentionOptions plain, causal, window, padded, biased, window_only, alibi;
  causal.causal = true;
  window.causal = true;
  window.window = 2;
  window_only.window = 2;  // a window without the causal mask: keys (position - 2, S)
  padded.key_padding = Tensor::from_vector({0, 0, 1, 0, 0, 0, 1, 1}, {2, 4}, DType::f32);
  biased.bias = Tensor::from_vector({0.5, -1.0, 0.0, 2.0, 0.1, -0.3, 0.7, 0.2, -0.5}, {3, 3}, DType::f64);
  biased.scale = 0.7;
  alibi.causal = true;  // an ALiBi-shaped (1, H, T, S) bias with the causal mask
  alibi.bias = Tensor::from_vector({0, 0, 0, -0.5, 0, 0, -1, -0.5, 0, 0, 0, 0, -0.25, 0, 0, -0.5, -0.25, 0},
                                   {1, 2, 3, 3}, DType::f64);
  r.add("attention", tag + "plain", {{q}, {kv}, {kv}}, attn(plain));
  r.add("attention", tag + "causal", {{q}, {kv}, {kv}}, attn(causal));
  r.add("attention", tag + "causal, T=3 < S=5", {{q}, {kv5}, {kv5}}, attn(causal));
  r.add("attention", tag + "causal sliding window 2", {{q}, {kv5}, {kv5}}, attn(window));
  r.add("attention", tag + "sliding window 2 without causal", {{q}, {kv5}, {kv5}}, attn(window_only));
  // Causal attention works in blocks of 32 query rows (stored) or tiles of 64 (tiled): 66 rows
  // make three blocks or two tiles, and S = 68 keys make two key tiles.
  r.add("attention", tag + "causal, T=66 < S=68 (several row blocks)",
        {{{1, 1, 66, 2}}, {{1, 1, 68, 2}}, {{1, 1, 68, 2}}}, attn(causal));
  r.add("attention", tag + "key padding", {{q}, {{2, 2, 4, 4}}, {{2, 2, 4, 4}}}, attn(padded));
  r.add("attention", tag + "additive bias (T, S), scale 0.7", {{q}, {kv}, {kv}}, attn(biased));
  r.add("attention", tag + "ALiBi-shaped bias (1, H, T, S), causal", {{q}, {kv}, {kv}}, attn(alibi));
  // D = 40 > 32: the head products run on OpenBLAS instead of small_gemm.
  r.add("attention", tag + "causal, head size 40 (BLAS)", {{{1, 2, 3, 40}}, {{1, 2, 3, 40}}, {{1, 2, 3, 40}}},
        attn(causal));
  // attention_packed reads the heads out of qkv (B, T, 3 * H * D) = (2, 3, 3 * 2 * 4).
  auto packed = [kernel](AttentionOptions opt) {
    opt.kernel = kernel;
    return [opt](const Inputs& x) { return attention_packed(x[0], 2, opt); };
  };
  AttentionOptions padded3;
  padded3.key_padding = Tensor::from_vector({0, 1, 0, 0, 0, 1}, {2, 3}, DType::f32);
  r.add("attention", tag + "attention_packed qkv, plain", {{{2, 3, 24}}}, packed(plain));
  r.add("attention", tag + "attention_packed qkv, causal", {{{2, 3, 24}}}, packed(causal));
  r.add("attention", tag + "attention_packed qkv, causal, T=65 (three row blocks)", {{{1, 65, 6}}}, packed(causal));
  r.add("attention", tag + "attention_packed qkv, key padding", {{{2, 3, 24}}}, packed(padded3));
  r.add("attention", tag + "attention_packed qkv, additive bias, scale 0.7", {{{2, 3, 24}}}, packed(biased));
  r.add("attention", tag + "attention_packed qkv, causal sliding window 2", {{{2, 3, 24}}}, packed(window));
}

// Activation recomputation: the recomputed backward gives the gradients of the function itself,
// for the input and for a parameter the function reads (which the second run reaches as a leaf).
void checkpoints(Registry& r) {
  auto piece = [](const Tensor& w) {
    return [w](const Tensor& in) { return tanh(matmul(in, w)) * in + in; };  // (3, 4)
  };
  r.add("checkpoint", "checkpoint of tanh(x W) * x + x, x and W", {{{3, 4}}, {{4, 4}}},
        [piece](const Inputs& x) { return checkpoint(piece(x[1]), x[0], {x[1]}); });
  r.add("checkpoint", "two checkpoints in a row, the input also used outside", {{{3, 4}}, {{4, 4}}},
        [piece](const Inputs& x) {
          Tensor h = checkpoint(piece(x[1]), x[0], {x[1]});
          return checkpoint(piece(x[1]), h, {x[1]}) * x[0];
        });
}

}  // namespace

std::vector<GradcheckCase> op_gradcheck_cases() {
  Registry r;
  elementwise(r);
  broadcasting(r);
  repeated(r);
  reductions(r);
  shapes(r);
  matmuls(r);
  nn_ops(r);
  attention_ops(r, AttentionKernel::stored);
  attention_ops(r, AttentionKernel::tiled);
  checkpoints(r);
  return std::move(r.cases);
}

}  // namespace sf
