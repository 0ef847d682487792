// check_layers.cpp: the checks of exercises 11-14 (lessons 9 layernorm, 10 feedforward and 12 decoder): LayerNorm forward and
// backward, GELU, appending to a KV cache.
#include <cmath>
#include <tuple>

#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"

namespace sf::exercise {

static Tensor f64(const std::vector<double>& values, const Shape& shape) {
  return Tensor::from_vector(values, shape, DType::f64);
}

// ---- 11 LayerNorm forward ----
void check_layer_norm_forward(Report& r) {
  const char* hint =
      "per row: mean = sum x / C, var = sum (x - mean)^2 / C (biased), y = (x - mean) / "
      "sqrt(var + eps) * w + b; reduce over axis -1 with keepdim";
  r.check(
      "values on (3, 8)",
      [] {
        Tensor x = random_f64({3, 8}, 81), w = random_f64({8}, 82), b = random_f64({8}, 83);
        return compare(sf::layer_norm(x, w, b, 1e-5), layer_norm_forward(x, w, b, 1e-5));
      },
      hint);
  r.check(
      "values on (2, 3, 4): statistics per token, over the last axis",
      [] {
        Tensor x = random_f64({2, 3, 4}, 84), w = random_f64({4}, 85), b = random_f64({4}, 86);
        return compare(sf::layer_norm(x, w, b, 1e-5), layer_norm_forward(x, w, b, 1e-5));
      },
      "mean and var are per row (axis -1, keepdim), never over the whole tensor");
  r.check(
      "eps = 0.5 goes inside the square root",
      [] {
        Tensor x = random_f64({2, 4}, 87), w = random_f64({4}, 88), b = random_f64({4}, 89);
        Tensor got = layer_norm_forward(x, w, b, 0.5);
        Tensor xc = x - sf::mean(x, -1, true), var = sf::mean(xc * xc, -1, true);
        return diagnose(compare(sf::layer_norm(x, w, b, 0.5), got), got,
                        {{"eps is added outside the square root: sqrt(var) + eps", xc / (sf::sqrt(var) + 0.5) * w + b},
                         {"eps is fixed at 1e-5 instead of the eps argument", sf::layer_norm(x, w, b, 1e-5)},
                         {"var is unbiased (/(C - 1)); LayerNorm's is biased (/C)",
                          xc / sf::sqrt(var * (4.0 / 3.0) + 0.5) * w + b}});
      },
      "use the eps argument, inside the square root: sqrt(var + eps), not sqrt(var) + eps or a fixed 1e-5");
  r.check(
      "float32: x, w, b float32 (2, 6) give float32, eps 1e-3",
      [] {
        Tensor x = random_f64({2, 6}, 95).to(DType::f32), w = random_f64({6}, 96).to(DType::f32),
               b = random_f64({6}, 97).to(DType::f32);
        Tensor got = layer_norm_forward(x, w, b, 1e-3);
        std::string d = same_dtype(got, DType::f32);
        return d.empty() ? compare(sf::layer_norm(x, w, b, 1e-3), got, 1e-5, 1e-5) : d;
      },
      "sf ops on x, w and b keep their dtype");
  r.check(
      "edge: rows far from zero (1e6 + noise)",
      [] {
        Tensor x = random_f64({2, 6}, 90) + 1e6, w = random_f64({6}, 91), b = random_f64({6}, 92);
        return compare(sf::layer_norm(x, w, b, 1e-5), layer_norm_forward(x, w, b, 1e-5), 1e-9, 1e-7);
      },
      "var as mean(x^2) - mean^2 cancels catastrophically at 1e6: take the mean of (x - mean)^2");
  r.check(
      "edge: C = 1 and a constant row give y = b",
      [] {
        Tensor x = f64({3.0, -2.0}, {2, 1}), w = f64({2.0}, {1}), b = f64({0.25}, {1});
        std::string a = compare(sf::layer_norm(x, w, b, 1e-5), layer_norm_forward(x, w, b, 1e-5));
        if (!a.empty()) return "C = 1" + tr(": ", "：") + a;
        Tensor xc = Tensor::full({1, 4}, 7.0, DType::f64), wc = random_f64({4}, 93), bc = random_f64({4}, 94);
        std::string c = compare(sf::layer_norm(xc, wc, bc, 1e-5), layer_norm_forward(xc, wc, bc, 1e-5));
        return c.empty() ? c : tr("constant row: ", "常数行：") + c;
      },
      "x - mean is 0 there and eps keeps sqrt(var + eps) > 0, so y = 0 * w + b");
}

// ---- 12 LayerNorm backward ----
static Tensor layer_norm_op(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  return op_with_backward(
      {x, w, b}, [eps](const std::vector<Tensor>& in) { return sf::layer_norm(in[0], in[1], in[2], eps); },
      [eps](const std::vector<Tensor>& in, const Tensor&, const Tensor& dy) {
        LayerNormGrads g = layer_norm_backward(in[0], in[1], dy, eps);
        return std::vector<Tensor>{g.dx, g.dw, g.db};
      },
      {"x", "w", "b"});
}

// dx of LayerNorm with eps `eps`, optionally without its mean term, its variance term or w: the
// right formula and the usual mistakes in deriving it.
static Tensor layer_norm_dx(const Tensor& x, const Tensor& w, const Tensor& dy, double eps, bool mean_term,
                            bool var_term, bool with_w) {
  Tensor xc = x - sf::mean(x, -1, true), rstd = 1.0 / sf::sqrt(sf::mean(xc * xc, -1, true) + eps);
  Tensor xhat = xc * rstd, g = with_w ? dy * w : dy, dx = g;
  if (mean_term) dx = dx - sf::mean(g, -1, true);
  if (var_term) dx = dx - xhat * sf::mean(g * xhat, -1, true);
  return rstd * dx;
}

// Compares the learner's dx, dw, db with the framework's backward of layer_norm; a wrong dx is
// checked against the usual mistakes.
static std::string layer_norm_grads_match(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& dy,
                                          double eps) {
  sf::layer_norm(x, w, b, eps).backward(dy);
  LayerNormGrads g = layer_norm_backward(x.detach(), w.detach(), dy, eps);
  Tensor xd = x.detach(), wd = w.detach();
  const std::vector<Mistake> dx_mistakes = {
      {"the variance term is missing: dx needs - xhat mean(g xhat) too, because var depends on x",
       layer_norm_dx(xd, wd, dy, eps, true, false, true)},
      {"the mean term is missing: dx needs - mean(g) too, because the mean depends on x",
       layer_norm_dx(xd, wd, dy, eps, false, true, true)},
      {"mean and variance are treated as constants: dx = rstd g", layer_norm_dx(xd, wd, dy, eps, false, false, true)},
      {"w is left out: the gradient reaching xhat is g = dy w, not dy",
       layer_norm_dx(xd, wd, dy, eps, true, true, false)},
      {"eps is fixed at 1e-5 instead of the eps argument", layer_norm_dx(xd, wd, dy, 1e-5, true, true, true)}};
  std::string dx = diagnose(compare(x.grad(), g.dx), g.dx, dx_mistakes);
  if (!dx.empty()) return "dx " + dx;
  std::string dw = compare(w.grad(), g.dw);
  if (!dw.empty()) return "dw " + dw;
  std::string db = compare(b.grad(), g.db);
  return db.empty() ? db : "db " + db;
}

void check_layer_norm_backward(Report& r) {
  const char* hint =
      "xhat = (x - mean) rstd, rstd = 1 / sqrt(var + eps), g = dy w: dx = rstd (g - mean(g) - "
      "xhat mean(g xhat)) per row; dw = sum of dy xhat and db = sum of dy over every row";
  r.check(
      "values of dx, dw, db on (3, 5) against the framework's backward",
      [] {
        Tensor x = random_f64({3, 5}, 101).requires_grad_(), w = random_f64({5}, 102).requires_grad_(),
               b = random_f64({5}, 103).requires_grad_();
        Tensor dy = random_f64({3, 5}, 104);
        return layer_norm_grads_match(x, w, b, dy, 1e-5);
      },
      hint);
  r.check(
      "values with eps 0.3 (not the default 1e-5) and dy of scale 3",
      [] {
        Tensor x = random_f64({2, 4}, 114, 0.3).requires_grad_(), w = random_f64({4}, 115).requires_grad_(),
               b = random_f64({4}, 116).requires_grad_();
        return layer_norm_grads_match(x, w, b, random_f64({2, 4}, 117, 3.0), 0.3);
      },
      "use the eps argument in rstd = 1 / sqrt(var + eps): with small rows eps = 0.3 changes everything");
  r.check(
      "float32: x, w, dy float32 give float32 dx, dw, db",
      [] {
        Tensor x = random_f64({2, 5}, 118).to(DType::f32), w = random_f64({5}, 119).to(DType::f32),
               dy = random_f64({2, 5}, 120).to(DType::f32);
        LayerNormGrads g = layer_norm_backward(x, w, dy, 1e-5);
        for (auto [name, t] : {std::pair{"dx", g.dx}, std::pair{"dw", g.dw}, std::pair{"db", g.db}}) {
          std::string d = same_dtype(t, DType::f32);
          if (!d.empty()) return std::string(name) + ": " + d;
        }
        Tensor x64 = x.to(DType::f64).requires_grad_(), w64 = w.to(DType::f64).requires_grad_(),
               b64 = Tensor::zeros({5}, DType::f64).requires_grad_();
        sf::layer_norm(x64, w64, b64, 1e-5).backward(dy.to(DType::f64));
        std::string a = compare(x64.grad(), g.dx.to(DType::f64), 1e-5, 1e-4);
        return a.empty() ? a : "dx " + a;
      },
      "sf ops on x, w and dy keep their dtype");
  r.check(
      "float64 gradient check on (2, 4)",
      [] {
        Tensor x = random_f64({2, 4}, 105).requires_grad_(), w = random_f64({4}, 106).requires_grad_(),
               b = random_f64({4}, 107).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return layer_norm_op(in[0], in[1], in[2], 1e-5); },
                              {x, w, b}, {"x", "w", "b"});
      },
      hint);
  r.check(
      "float64 gradient check on (2, 2, 3): dw and db sum over every leading axis",
      [] {
        Tensor x = random_f64({2, 2, 3}, 108).requires_grad_(), w = random_f64({3}, 109).requires_grad_(),
               b = random_f64({3}, 110).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return layer_norm_op(in[0], in[1], in[2], 1e-5); },
                              {x, w, b}, {"x", "w", "b"});
      },
      "dw and db have shape (C): sum dy xhat and dy over all axes but the last");
  r.check(
      "edge: C = 1 (dx is 0: y does not depend on x)",
      [] {
        Tensor x = random_f64({3, 1}, 111).requires_grad_(), w = random_f64({1}, 112).requires_grad_(),
               b = random_f64({1}, 113).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return layer_norm_op(in[0], in[1], in[2], 1e-5); },
                              {x, w, b}, {"x", "w", "b"});
      },
      "the formula already gives 0 here: g - mean(g) is 0 for a row of one");
}

// ---- 13 GELU ----
static Tensor gelu_op(const Tensor& x) {
  return op_with_backward(
      {x}, [](const std::vector<Tensor>& in) { return sf::gelu(in[0], GeluApprox::tanh); },
      [](const std::vector<Tensor>& in, const Tensor&, const Tensor& dy) {
        return std::vector<Tensor>{gelu_backward(in[0], dy)};
      },
      {"x"});
}

void check_gelu(Report& r) {
  const char* fwd_hint = "y = 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3)";
  const char* bwd_hint =
      "dy/dx = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2), t = tanh(u); "
      "multiply by dy";
  r.check(
      "forward values on (4, 5)",
      [] {
        Tensor x = random_f64({4, 5}, 121, 2.0);
        return compare(sf::gelu(x, GeluApprox::tanh), gelu_forward(x));
      },
      fwd_hint);
  r.check(
      "edge: forward at 0, -5, +-20",
      [] {
        Tensor x = f64({0.0, -5.0, -20.0, 20.0}, {4});
        return compare(sf::gelu(x, GeluApprox::tanh), gelu_forward(x), 1e-12, 1e-9);
      },
      "GELU(0) = 0, GELU(x) -> x for large x and -> 0 for very negative x; tanh saturates cleanly");
  r.check(
      "backward values against the framework's backward",
      [] {
        Tensor x = random_f64({3, 4}, 122, 2.0).requires_grad_(), dy = random_f64({3, 4}, 123);
        sf::gelu(x, GeluApprox::tanh).backward(dy);
        Tensor got = gelu_backward(x.detach(), dy);
        return diagnose(compare(x.grad(), got), got,
                        {{"dy is ignored: multiply the derivative by the incoming gradient dy", x.grad() / dy}});
      },
      bwd_hint);
  r.check(
      "float32: x and dy float32 give float32 forward and backward",
      [] {
        Tensor x = random_f64({2, 4}, 125, 2.0).to(DType::f32), dy = random_f64({2, 4}, 126).to(DType::f32);
        Tensor y = gelu_forward(x);
        std::string d = same_dtype(y, DType::f32);
        if (!d.empty()) return tr("forward: ", "前向：") + d;
        Tensor xg = x.clone().requires_grad_();
        sf::gelu(xg, GeluApprox::tanh).backward(dy);
        Tensor g = gelu_backward(x, dy);
        std::string dg = same_dtype(g, DType::f32);
        if (!dg.empty()) return tr("backward: ", "反向：") + dg;
        std::string v = compare(sf::gelu(x, GeluApprox::tanh), y, 1e-6, 1e-5);
        if (!v.empty()) return tr("forward ", "前向") + v;
        std::string vg = compare(xg.grad(), g, 1e-6, 1e-5);
        return vg.empty() ? vg : tr("backward ", "反向") + vg;
      },
      "sf ops on x keep its dtype; scalars like 0.044715 are fine (a double times a tensor keeps the tensor's dtype)");
  r.check(
      "float64 gradient check on (2, 3)",
      [] {
        Tensor x = random_f64({2, 3}, 124, 2.0).requires_grad_();
        return gradient_check([](const std::vector<Tensor>& in) { return gelu_op(in[0]); }, {x}, {"x"});
      },
      bwd_hint);
}

// ---- 14 KV-cache append ----
void check_kv_cache_append(Report& r) {
  const char* hint = "an empty cache (k undefined) takes k and v as they are; otherwise concat along axis 2 (S)";
  Tensor k = random_f64({1, 2, 4, 3}, 131), v = random_f64({1, 2, 4, 3}, 132);
  Tensor k3 = slice(k, 2, 0, 3), v3 = slice(v, 2, 0, 3), k1 = slice(k, 2, 3, 4), v1 = slice(v, 2, 3, 4);
  r.check(
      "the first append fills an empty cache",
      [=] {
        KVCache cache;
        kv_cache_append(cache, k3, v3);
        std::string a = compare(k3, cache.k, 0, 0);
        if (!a.empty()) return "cache.k " + a;
        std::string b = compare(v3, cache.v, 0, 0);
        return b.empty() ? b : "cache.v " + b;
      },
      hint);
  r.check(
      "a second append of one token: (1, 2, 3, 3) + (1, 2, 1, 3) -> (1, 2, 4, 3)",
      [=] {
        KVCache cache;
        kv_cache_append(cache, k3, v3);
        kv_cache_append(cache, k1, v1);
        std::string a = compare(k, cache.k, 0, 0);
        if (!a.empty()) return "cache.k " + a;
        std::string b = compare(v, cache.v, 0, 0);
        return b.empty() ? b : "cache.v " + b;
      },
      "the new keys go after the old ones along the time axis 2: sf::concat({cache.k, k}, 2)");
  r.check(
      "attention of the new token over the cache equals the last row of full causal attention",
      [=] {
        Tensor q = random_f64({1, 2, 4, 3}, 133);
        AttentionOptions causal;
        causal.causal = true;
        Tensor full = sf::attention(q, k, v, causal);  // (1, 2, 4, 3)
        KVCache cache;
        kv_cache_append(cache, k3, v3);
        kv_cache_append(cache, k1, v1);
        return compare(slice(full, 2, 3, 4), sf::attention(slice(q, 2, 3, 4), cache.k, cache.v, causal), 1e-12, 1e-10);
      },
      "after the appends the cache must hold every key and value seen so far, in order");
  r.check(
      "edge: one token at a time, four times",
      [=] {
        KVCache cache;
        for (int64_t s = 0; s < 4; ++s) kv_cache_append(cache, slice(k, 2, s, s + 1), slice(v, 2, s, s + 1));
        std::string a = compare(k, cache.k, 0, 0);
        if (!a.empty()) return "cache.k " + a;
        return cache.length() == 4 ? compare(v, cache.v, 0, 0)
                                   : "cache.length() " + tr("is ", "是 ") + std::to_string(cache.length()) +
                                         tr(", expected 4", "，应为 4");
      },
      "each call appends exactly the new tokens once");
  r.check(
      "float32: appending float32 keys and values keeps float32",
      [=] {
        KVCache cache;
        kv_cache_append(cache, k3.to(DType::f32), v3.to(DType::f32));
        kv_cache_append(cache, k1.to(DType::f32), v1.to(DType::f32));
        std::string d = same_dtype(cache.k, DType::f32);
        if (!d.empty()) return "cache.k: " + d;
        std::string a = compare(k.to(DType::f32), cache.k, 0, 0);
        return a.empty() ? compare(v.to(DType::f32), cache.v, 0, 0) : "cache.k " + a;
      },
      "keep the tensors as they are: sf::concat keeps their dtype");
  r.check(
      "edge: keys of another head size are refused (sf::ShapeError)",
      [=] {
        KVCache cache;
        kv_cache_append(cache, k3, v3);
        Tensor wrong = random_f64({1, 2, 1, 5}, 134);
        try {
          kv_cache_append(cache, wrong, wrong);
        } catch (const ShapeError&) { return std::string(); }
        return "appending k " + shape_str(wrong.shape()) + " to a cache of " + shape_str(k3.shape()) + " was accepted";
      },
      "check that B, H and D of k and v match the cache's and throw sf::ShapeError naming the shapes (sf::concat does)");
}

}  // namespace sf::exercise
