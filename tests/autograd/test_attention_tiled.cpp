// The tiled attention kernel (online softmax, AttentionKernel::tiled) against the stored-
// probabilities kernel: values and all three gradients, every mask kind, both layouts, float32 at
// lengths around the 64-row tile and up to 4096, and the same bits for any thread count.
// (The float64 gradchecks of the tiled kernel are in autograd/gradcheck_ops.cpp, "tiled, ...".)
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autograd/cpu/head_gemm.h"
#include "autograd/cpu/threads.h"
#include "autograd/errors.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"

using namespace sf;

namespace {

// The largest |a[i] - b[i]|, divided by the largest |b[i]| or 1, whichever is larger (the
// inputs are O(1); a gradient that is exactly 0 in one kernel, such as dq with a single key, is a
// rounding-sized number in the other).
double max_rel_diff(const Tensor& a, const Tensor& b) {
  std::vector<double> x = a.to_vector(), y = b.to_vector();
  REQUIRE(x.size() == y.size());
  double worst = 0, scale = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    worst = std::max(worst, std::fabs(x[i] - y[i]));
    scale = std::max(scale, std::fabs(y[i]));
  }
  return worst / scale;
}

// The output and the gradients of q, k, v (in that order) of sum(attention(q, k, v) * w).
struct Run {
  std::vector<Tensor> values;
};
Run run_attention(const std::vector<Tensor>& qkvw, AttentionOptions opt, AttentionKernel kernel) {
  opt.kernel = kernel;
  std::vector<Tensor> in;
  for (int i = 0; i < 3; ++i) in.push_back(qkvw[i].detach().clone().requires_grad_());
  Tensor out = attention(in[0], in[1], in[2], opt);
  sum(out * qkvw[3]).backward();
  return {{out.detach(), in[0].grad(), in[1].grad(), in[2].grad()}};
}

std::vector<Tensor> random_inputs(int64_t B, int64_t H, int64_t T, int64_t S, int64_t D, DType dtype,
                                  uint64_t seed = 11) {
  Generator gen(seed);
  return {Tensor::randn({B, H, T, D}, gen, 1.0, dtype), Tensor::randn({B, H, S, D}, gen, 1.0, dtype),
          Tensor::randn({B, H, S, D}, gen, 1.0, dtype), Tensor::randn({B, H, T, D}, gen, 1.0, dtype)};
}

const std::string kWhat[] = {"out", "dq", "dk", "dv"};

// Tiled against stored for one shape and mask; returns the worst relative difference.
double tiled_vs_stored(int64_t B, int64_t H, int64_t T, int64_t S, int64_t D, const AttentionOptions& opt, DType dtype,
                       double tol) {
  std::vector<Tensor> x = random_inputs(B, H, T, S, D, dtype);
  Run stored = run_attention(x, opt, AttentionKernel::stored);
  Run tiled = run_attention(x, opt, AttentionKernel::tiled);
  double worst = 0;
  for (int i = 0; i < 4; ++i) {
    const double d = max_rel_diff(tiled.values[i], stored.values[i]);
    INFO("T=" << T << " S=" << S << " D=" << D << " causal=" << opt.causal << " window=" << opt.window << " "
              << kWhat[i] << ": relative difference " << d);
    CHECK(d <= tol);
    CHECK(std::isfinite(d));
    worst = std::max(worst, d);
  }
  return worst;
}

AttentionOptions causal_options(int64_t window = 0) {
  AttentionOptions o;
  o.causal = true;
  o.window = window;
  return o;
}

}  // namespace

// float64: the two kernels add the same terms in different orders, so they agree to rounding.
TEST_CASE("tiled attention equals the stored kernel in float64: every mask kind and the bias") {
  const double tol = 1e-12;
  AttentionOptions plain, window_only, padded, biased;
  window_only.window = 5;
  padded.key_padding = Tensor::from_vector({0, 0, 1, 0, 0, 0, 0, 1, 1, 1}, {2, 5}, DType::f32);
  Generator gen(3);
  biased.bias = Tensor::randn({1, 3, 70, 90}, gen, 1.0, DType::f64);  // ALiBi's (1, H, T, S) shape
  biased.causal = true;
  tiled_vs_stored(2, 3, 7, 7, 8, plain, DType::f64, tol);
  tiled_vs_stored(2, 3, 70, 90, 8, causal_options(), DType::f64, tol);
  tiled_vs_stored(2, 3, 70, 90, 8, causal_options(16), DType::f64, tol);
  tiled_vs_stored(2, 3, 70, 130, 8, window_only, DType::f64, tol);
  tiled_vs_stored(2, 3, 4, 5, 8, padded, DType::f64, tol);
  tiled_vs_stored(2, 3, 70, 90, 8, biased, DType::f64, tol);
  tiled_vs_stored(1, 2, 70, 90, 48, causal_options(), DType::f64, tol);  // D > 32: OpenBLAS products
}

// float32 at T in {1, 63, 64, 65, 1000, 4096} and S != T. Tolerance 1e-5 of the tensor's largest
// magnitude (about 84 float32 ulps there; observed worst 1.2e-6, about 10 ulps, printed by the
// test): both kernels round every product and sum to float32 but in different orders (the tiled
// one rescales its partial sums as the running max grows and sums P V over 64-key tiles), so
// they differ by rounding that grows with the row length.
TEST_CASE("tiled attention equals the stored kernel in float32 within rounding, T from 1 to 4096") {
  const double tol = 1e-5;
  double worst = 0;
  AttentionOptions plain;
  for (int64_t D : {int64_t(16), kernels::kSmallHeadMaxD + 1}) {  // small_gemm and OpenBLAS products
    worst = std::max(worst, tiled_vs_stored(2, 2, 1, 1, D, plain, DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(2, 2, 1, 9, D, causal_options(), DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(2, 2, 63, 63, D, causal_options(), DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(2, 2, 64, 64, D, plain, DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(2, 2, 64, 100, D, causal_options(), DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(2, 2, 65, 65, D, causal_options(9), DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(2, 2, 65, 130, D, plain, DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(1, 2, 1000, 1000, D, causal_options(), DType::f32, tol));
    worst = std::max(worst, tiled_vs_stored(1, 1, 1000, 1200, D, plain, DType::f32, tol));
  }
  worst = std::max(worst, tiled_vs_stored(1, 1, 4096, 4096, 16, causal_options(), DType::f32, tol));
  worst = std::max(worst, tiled_vs_stored(1, 1, 4096, 4100, 64, causal_options(256), DType::f32, tol));
  MESSAGE("worst relative difference tiled vs stored, float32: " << worst);
}

TEST_CASE("tiled attention_packed equals the stored kernel, and the heads as (B, H, T, D)") {
  const int64_t B = 2, T = 70, H = 3, D = 8, C = H * D;
  Generator gen(5);
  Tensor qkv0 = Tensor::randn({B, T, 3 * C}, gen, 1.0, DType::f64);
  Tensor w = Tensor::randn({B, T, C}, gen, 1.0, DType::f64);
  for (AttentionOptions opt : {causal_options(), causal_options(10), AttentionOptions{}}) {
    std::vector<Tensor> results;
    for (AttentionKernel kernel : {AttentionKernel::stored, AttentionKernel::tiled}) {
      opt.kernel = kernel;
      Tensor qkv = qkv0.detach().clone().requires_grad_();
      Tensor out = attention_packed(qkv, H, opt);
      sum(out * w).backward();
      results.push_back(out.detach());
      results.push_back(qkv.grad());
    }
    CHECK(max_rel_diff(results[2], results[0]) < 1e-12);
    CHECK(max_rel_diff(results[3], results[1]) < 1e-12);
  }
}

TEST_CASE("tiled attention gives the same bits for 1 and 2 threads, both layouts") {
  std::vector<Tensor> x = random_inputs(2, 3, 130, 150, 16, DType::f32);
  Generator gen(9);
  Tensor qkv0 = Tensor::randn({2, 130, 3 * 48}, gen, 1.0, DType::f32);
  std::vector<std::vector<double>> by_threads[2];
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Run r = run_attention(x, causal_options(), AttentionKernel::tiled);
    for (const Tensor& t : r.values) by_threads[threads - 1].push_back(t.to_vector());
    AttentionOptions opt = causal_options();
    opt.kernel = AttentionKernel::tiled;
    Tensor qkv = qkv0.detach().clone().requires_grad_();
    Tensor out = attention_packed(qkv, 3, opt);
    sum(out * out).backward();
    by_threads[threads - 1].push_back(out.to_vector());
    by_threads[threads - 1].push_back(qkv.grad().to_vector());
  }
  set_num_threads(0);
  REQUIRE(by_threads[0].size() == by_threads[1].size());
  for (size_t i = 0; i < by_threads[0].size(); ++i) CHECK(by_threads[0][i] == by_threads[1][i]);
}

TEST_CASE("tiled attention: a query that sees no key gives zeros, never NaN, and so do its gradients") {
  AttentionOptions opt;
  opt.key_padding = Tensor::from_vector({0, 1, 0, 1, 1, 1, 1, 1}, {2, 4}, DType::f32);  // batch 1: all padding
  std::vector<Tensor> x = random_inputs(2, 2, 3, 4, 8, DType::f64);
  Run stored = run_attention(x, opt, AttentionKernel::stored);
  Run tiled = run_attention(x, opt, AttentionKernel::tiled);
  for (int i = 0; i < 4; ++i) {
    std::vector<double> v = tiled.values[i].to_vector();
    for (double e : v) CHECK(std::isfinite(e));
    CHECK(max_rel_diff(tiled.values[i], stored.values[i]) < 1e-12);
  }
  std::vector<double> out = tiled.values[0].to_vector();
  for (size_t i = out.size() / 2; i < out.size(); ++i) CHECK(out[i] == 0.0);
}

TEST_CASE("asking for the weights runs the stored kernel, whatever kernel is chosen") {
  std::vector<Tensor> x = random_inputs(1, 2, 5, 5, 4, DType::f64);
  AttentionOptions opt = causal_options();
  opt.kernel = AttentionKernel::tiled;
  Tensor weights;
  Tensor out = attention(x[0], x[1], x[2], opt, &weights);
  REQUIRE(weights.defined());
  CHECK(weights.shape() == Shape{1, 2, 5, 5});
  opt.kernel = AttentionKernel::stored;
  CHECK(max_rel_diff(out, attention(x[0], x[1], x[2], opt)) < 1e-12);
}

// The config reads model.attention through the same table (tests/train/test_config.cpp checks its
// error for an unknown name); bench_attention's child processes read it with parse_named.
TEST_CASE("attention kernel names: one table, each name read back to its kernel, errors name the key") {
  for (AttentionKernel k : {AttentionKernel::stored, AttentionKernel::tiled, AttentionKernel::automatic})
    CHECK(parse_named(kAttentionKernels, attention_kernel_name(k), "attention") == k);
  CHECK(std::string(attention_kernel_name(AttentionKernel::automatic)) == "auto");
  CHECK_THROWS_WITH_AS(parse_named(kAttentionKernels, "flash", "bench_attention --child"),
                       "bench_attention --child: unknown 'flash' (valid: stored, tiled, auto)", ConfigError);
}
