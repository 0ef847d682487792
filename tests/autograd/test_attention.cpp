// The fused attention op against the same computation composed from primitives:
// matmul (K transposed by flag), masked_fill, softmax, matmul. Values and all three gradients.
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/ops.h"
#include "autograd/ops_attention.h"

using namespace sf;

namespace {

// The largest |a - b| over all elements of two tensors of the same size.
double max_abs_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(x[i] - y[i]));
  return worst;
}

// The mask the fused op applies, built by hand: (B, 1, T, S) with 1 = masked.
Tensor reference_mask(int64_t B, int64_t T, int64_t S, const AttentionOptions& opt) {
  std::vector<double> m(static_cast<size_t>(B * T * S), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s < S; ++s) {
        int64_t pos = S - T + t;
        bool masked = (opt.causal && s > pos) || (opt.window > 0 && s <= pos - opt.window) ||
                      (opt.key_padding.defined() && opt.key_padding.at({b, s}) != 0);
        m[static_cast<size_t>((b * T + t) * S + s)] = masked ? 1.0 : 0.0;
      }
  return Tensor::from_vector(m, {B, 1, T, S}, DType::f64);
}

Tensor composed_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& opt) {
  int64_t B = q.size(0), T = q.size(2), S = k.size(2);
  Tensor scores = matmul_bt(q, k) * (1.0 / std::sqrt(static_cast<double>(q.size(3))));
  if (opt.bias.defined()) scores = scores + opt.bias;
  scores = masked_fill(scores, reference_mask(B, T, S, opt), -INFINITY);
  return matmul(softmax(scores, -1), v);
}

void check_against_composed(int64_t B, int64_t H, int64_t T, int64_t S, int64_t D, const AttentionOptions& opt,
                            DType dtype = DType::f64, double tol = 1e-12) {
  Generator gen(7);
  Tensor q = Tensor::randn({B, H, T, D}, gen, 1.0, dtype).requires_grad_();
  Tensor k = Tensor::randn({B, H, S, D}, gen, 1.0, dtype).requires_grad_();
  Tensor v = Tensor::randn({B, H, S, D}, gen, 1.0, dtype).requires_grad_();
  Tensor w = Tensor::randn({B, H, T, D}, gen, 1.0, dtype);  // projects the output to a scalar

  Tensor fused = attention(q, k, v, opt);
  sum(fused * w).backward();
  std::vector<Tensor> fused_grads = {q.grad().clone(), k.grad().clone(), v.grad().clone()};
  for (Tensor* t : {&q, &k, &v}) t->set_grad(Tensor());

  Tensor composed = composed_attention(q, k, v, opt);
  sum(composed * w).backward();
  std::vector<Tensor> composed_grads = {q.grad(), k.grad(), v.grad()};

  CHECK(max_abs_diff(fused, composed) < tol);
  for (int i = 0; i < 3; ++i) CHECK(max_abs_diff(fused_grads[i], composed_grads[i]) < tol);
}

}  // namespace

TEST_CASE("fused attention equals the composed version: no mask") { check_against_composed(2, 3, 4, 4, 5, {}); }

TEST_CASE("fused attention equals the composed version: causal, cross lengths, window") {
  AttentionOptions causal;
  causal.causal = true;
  check_against_composed(2, 2, 5, 5, 4, causal);
  check_against_composed(1, 2, 2, 6, 4, causal);  // queries at the end of a longer key sequence
  AttentionOptions local = causal;
  local.window = 2;
  check_against_composed(1, 2, 6, 6, 3, local);
}

// Causal attention computes blocks of 32 query rows against only the keys they can see (the tiled
// kernel tiles of 64), so these lengths sit on both sides of the block boundaries; S > T is a
// KV-cache-like call.
TEST_CASE("causal attention in row blocks equals the composed version: T around 32 and 64, S >= T") {
  AttentionOptions causal;
  causal.causal = true;
  for (int64_t T : {1, 31, 32, 33, 63, 64, 65, 130})
    for (int64_t S : {T, T + 3}) {
      CAPTURE(T);
      CAPTURE(S);
      check_against_composed(1, 2, T, S, 4, causal);
      check_against_composed(1, 2, T, S, 4, causal, DType::f32, 1e-5);
    }
  AttentionOptions local = causal;  // a window that reaches back across a block boundary
  local.window = 70;
  std::vector<double> pad(133, 0.0);
  pad[66] = 1;  // a padding key inside the second block's view
  local.key_padding = Tensor::from_vector(pad, {1, 133}, DType::f64);
  Generator gen(5);
  local.bias = Tensor::randn({130, 133}, gen, 1.0, DType::f64);
  check_against_composed(1, 2, 130, 133, 4, local);
}

TEST_CASE("causal attention weights are exactly 0 above the diagonal and sum to 1") {
  AttentionOptions causal;
  causal.causal = true;
  const int64_t T = 70, S = 72;
  Generator gen(9);
  Tensor q = Tensor::randn({1, 1, T, 8}, gen, 1.0, DType::f32), k = Tensor::randn({1, 1, S, 8}, gen, 1.0, DType::f32);
  Tensor weights;
  attention(q, k, k, causal, &weights);
  REQUIRE(weights.shape() == Shape{1, 1, T, S});
  std::vector<double> p = weights.to_vector();
  for (int64_t t = 0; t < T; ++t) {
    double total = 0;
    for (int64_t s = 0; s < S; ++s) {
      double x = p[static_cast<size_t>(t * S + s)];
      if (s > S - T + t) CHECK(x == 0.0);
      else CHECK(x > 0.0);
      total += x;
    }
    CHECK(total == doctest::Approx(1.0).epsilon(1e-5));
  }
}

TEST_CASE("fused attention equals the composed version: key padding and bias") {
  AttentionOptions opt;
  opt.key_padding = Tensor::from_vector({0, 0, 1, 1, 0, 0, 0, 1}, {2, 4}, DType::f64);
  Generator gen(3);
  opt.bias = Tensor::randn({2, 3, 4}, gen, 1.0, DType::f64);  // (H, T, S)
  check_against_composed(2, 2, 3, 4, 4, opt);
}

TEST_CASE("a fully masked row gives zeros, not NaN, and zero gradients") {
  AttentionOptions opt;
  opt.key_padding = Tensor::ones({1, 3}, DType::f64);
  Generator gen(1);
  Tensor q = Tensor::randn({1, 1, 2, 2}, gen, 1.0, DType::f64).requires_grad_();
  Tensor k = Tensor::randn({1, 1, 3, 2}, gen, 1.0, DType::f64).requires_grad_();
  Tensor v = Tensor::randn({1, 1, 3, 2}, gen, 1.0, DType::f64).requires_grad_();
  Tensor out = attention(q, k, v, opt);
  for (double x : out.to_vector()) CHECK(x == 0.0);
  sum(out).backward();
  for (double x : q.grad().to_vector()) CHECK(x == 0.0);
}

TEST_CASE("attention shape errors name the op and the shapes") {
  Tensor q = Tensor::zeros({1, 2, 3, 4}), k = Tensor::zeros({1, 2, 3, 5});
  CHECK_THROWS_WITH_AS(attention(q, k, k), doctest::Contains("attention: q and k must agree"), ShapeError);
}

// attention_packed against slicing q, k, v out of qkv by hand with primitives:
// (B, T, 3C) -> reshape (B, T, 3, H, D) -> slice one of the 3 -> permute to (B, H, T, D),
// then the (B, H, T, D) attention, then back to (B, T, C).
static void check_packed_against_sliced(int64_t B, int64_t T, int64_t H, int64_t D, const AttentionOptions& opt,
                                        DType dtype, double tol) {
  Generator gen(11);
  const int64_t C = H * D;
  Tensor qkv = Tensor::randn({B, T, 3 * C}, gen, 1.0, dtype).requires_grad_();
  Tensor w = Tensor::randn({B, T, C}, gen, 1.0, dtype);

  Tensor packed = attention_packed(qkv, H, opt);
  sum(packed * w).backward();
  Tensor packed_grad = qkv.grad().clone();
  qkv.set_grad(Tensor());

  Tensor five = reshape(qkv, {B, T, 3, H, D});
  auto head = [&](int64_t i) { return permute(reshape(slice(five, 2, i, i + 1), {B, T, H, D}), {0, 2, 1, 3}); };
  Tensor y = attention(head(0), head(1), head(2), opt);          // (B, H, T, D)
  Tensor sliced = reshape(permute(y, {0, 2, 1, 3}), {B, T, C});  // (B, T, C)
  sum(sliced * w).backward();

  CHECK(max_abs_diff(packed, sliced) <= tol);
  CHECK(max_abs_diff(packed_grad, qkv.grad()) <= tol);
}

TEST_CASE("attention_packed equals slicing the heads out of qkv by hand") {
  AttentionOptions causal;
  causal.causal = true;
  check_packed_against_sliced(2, 5, 3, 4, {}, DType::f64, 1e-12);
  check_packed_against_sliced(2, 5, 3, 4, causal, DType::f64, 1e-12);
  AttentionOptions padded = causal;
  padded.key_padding = Tensor::from_vector({0, 0, 0, 1, 1, 0, 0, 0, 0, 0}, {2, 5}, DType::f64);
  check_packed_against_sliced(2, 5, 3, 4, padded, DType::f64, 1e-12);
  // Big enough that the (batch, head) pairs are split over the thread pool, in float32.
  check_packed_against_sliced(8, 33, 4, 16, causal, DType::f32, 1e-5);
}

TEST_CASE("attention_packed rejects a qkv that is not (B, T, 3 * H * D)") {
  CHECK_THROWS_WITH_AS(attention_packed(Tensor::zeros({2, 3, 10}), 2),
                       doctest::Contains("attention_packed: qkv must be"), ShapeError);
}
