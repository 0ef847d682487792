// bench_ops.cpp: what the autograd engine costs on top of the arithmetic.
//
//   1. Per-op overhead on tiny (4, 4) float32 tensors, where the arithmetic is nearly free and
//      what remains is allocation, dispatch, graph recording and the backward walk (ns per op).
//   2. matmul GFLOP/s at a few shapes, against cblas_sgemm called directly on the same buffers:
//      the difference is the engine's overhead (allocating the output, shape checks).
//   3. Fused attention_packed, forward+backward, at bench_gpt's tiny, small and medium shapes, causal
//      (computed in row blocks over the visible keys only) against non-causal (the full matrix).
//   4. The linear products of bench_gpt's small shape (M = 2048 rows) with warm operands, against
//      this CPU's own FMA rate: small_gemm (the direct kernel) and OpenBLAS on one thread, then
//      split over the pool (every thread). Issue 23's limit is measured on the same products.
//   5. The weight gradients as a training step makes them: dW += dy^T x over one panel of 256 rows
//      (linear's panel backward), on one core: small_gemm reading dy^T in place, the AVX2 build's
//      small_gemm_packed_a (both operands copied first), and OpenBLAS.
//
// Each measurement repeats for ~0.2 s and reports the best of 3 runs (the least disturbed by
// other processes). Not run by the tests: `cmake --build build --target bench_ops` and run
// build/bench/bench_ops. Threads: OpenBLAS uses all cores unless SF_NUM_THREADS says otherwise.
#include <cblas.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <functional>
#include <tuple>

#include "app/startup.h"
#include "autograd/cpu/small_gemm.h"
#include "autograd/cpu/threads.h"
#include "autograd/graph.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"

using namespace sf;
using Clock = std::chrono::steady_clock;

// Best time per call of f, in nanoseconds.
static double time_ns(const std::function<void()>& f) {
  double best = 1e300;
  for (int run = 0; run < 3; ++run) {
    int64_t calls = 0;
    auto start = Clock::now();
    double elapsed = 0;
    do {
      for (int i = 0; i < 16; ++i) f();
      calls += 16;
      elapsed = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    } while (elapsed < 2e8);
    best = std::min(best, elapsed / static_cast<double>(calls));
  }
  return best;
}

static void overhead_row(const char* name, const std::function<Tensor(const Tensor&, const Tensor&)>& op,
                         const Shape& b_shape = {4, 4}) {
  Generator gen(1);
  Tensor a = Tensor::randn({4, 4}, gen), b = Tensor::randn(b_shape, gen);
  Tensor ga = a.detach().requires_grad_(), gb = b.detach().requires_grad_();
  Tensor seed = Tensor::ones(op(a, b).shape());
  double plain, recorded, both;
  {
    NoGradGuard no_grad;
    plain = time_ns([&] { op(a, b); });
  }
  recorded = time_ns([&] { op(ga, gb); });
  both = time_ns([&] { op(ga, gb).backward(seed); });
  std::printf("  %-22s %12.0f %14.0f %18.0f\n", name, plain, recorded, both);
}

static void matmul_row(int64_t M, int64_t K, int64_t N) {
  Generator gen(2);
  Tensor a = Tensor::randn({M, K}, gen), b = Tensor::randn({K, N}, gen);
  Tensor c = Tensor::empty({M, N});
  double flops = 2.0 * static_cast<double>(M * N * K);
  double raw = time_ns([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
                static_cast<int>(K), 1.0f, a.data<float>(), static_cast<int>(K), b.data<float>(), static_cast<int>(N),
                0.0f, c.data<float>(), static_cast<int>(N));
  });
  double ours;
  {
    NoGradGuard no_grad;
    ours = time_ns([&] { matmul(a, b); });
  }
  // forward + backward = 3 gemms (C, dA, dB), compared with 3 raw gemms' worth of flops
  Tensor ga = a.detach().requires_grad_(), gb = b.detach().requires_grad_();
  Tensor seed = Tensor::ones({M, N});
  double train = time_ns([&] {
    matmul(ga, gb).backward(seed);
    ga.set_grad(Tensor());
    gb.set_grad(Tensor());
  });
  char shape[64];
  std::snprintf(shape, sizeof shape, "(%lld,%lld)x(%lld,%lld)", static_cast<long long>(M), static_cast<long long>(K),
                static_cast<long long>(K), static_cast<long long>(N));
  std::printf("  %-22s %14.1f %14.1f %8.1f%% %16.1f\n", shape, flops / raw, flops / ours, 100.0 * raw / ours,
              3 * flops / train);
}

// attention_packed forward + backward on qkv (B, T, 3 H D), milliseconds per call.
static void attention_row(int64_t B, int64_t T, int64_t H, int64_t D) {
  Generator gen(3);
  Tensor qkv = Tensor::randn({B, T, 3 * H * D}, gen).requires_grad_();
  Tensor seed = Tensor::ones({B, T, H * D});
  auto ms = [&](bool causal) {
    AttentionOptions opt;
    opt.causal = causal;
    return 1e-6 * time_ns([&] {
             attention_packed(qkv, H, opt).backward(seed);
             qkv.set_grad(Tensor());
           });
  };
  double full = ms(false), causal = ms(true);
  char shape[64];
  std::snprintf(shape, sizeof shape, "B%lld T%lld H%lld D%lld", static_cast<long long>(B), static_cast<long long>(T),
                static_cast<long long>(H), static_cast<long long>(D));
  std::printf("  %-22s %14.2f %14.2f %9.2f\n", shape, full, causal, full / causal);
}

// One core's rate of vector FMAs with nothing else in the way: 12 independent chains (more than
// FMA latency x FMA ports), no memory traffic. GFLOP/s, 2 per lane per FMA.
static double fma_peak_gflops() {
  using Batch = xsimd::batch<float>;
  volatile float seed = 1.0f;  // not a constant: the compiler cannot fold the chains
  std::array<Batch, 12> acc;
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = Batch(seed + static_cast<float>(i));
  const Batch m(0.9999999f), c(1e-7f);
  const int64_t iterations = 20'000'000;
  const auto start = Clock::now();
  for (int64_t it = 0; it < iterations; ++it)
    for (Batch& a : acc) a = xsimd::fma(a, m, c);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  Batch total(0.0f);
  for (const Batch& a : acc) total += a;
  volatile float sink = xsimd::hadd(total);
  (void)sink;
  return 2.0 * Batch::size * static_cast<double>(acc.size() * iterations) / seconds / 1e9;
}

// C (M, N) = op(A) B for one of small's linear products (A transposed for a weight gradient):
// GFLOP/s of small_gemm and of OpenBLAS, on this thread alone and with the rows of C split over
// the pool.
static void product_row(const char* name, int64_t M, int64_t K, int64_t N, bool ta) {
  Generator gen(4);
  Tensor a = Tensor::randn(ta ? Shape{K, M} : Shape{M, K}, gen), b = Tensor::randn({K, N}, gen);
  Tensor c = Tensor::empty({M, N});
  const float *A = a.data<float>(), *B = b.data<float>();
  float* C = c.data<float>();
  const int64_t rsa = ta ? 1 : K, csa = ta ? M : 1;  // op(A)(m, k) = A[m rsa + k csa]
  auto ours = [&](int64_t r0, int64_t r1) {
    kernels::small_gemm<float>(r1 - r0, N, K, 1.f, A + r0 * rsa, rsa, csa, B, N, 0.f, C + r0 * N, N);
  };
  auto openblas = [&](int64_t r0, int64_t r1) {
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, CblasNoTrans, static_cast<int>(r1 - r0),
                static_cast<int>(N), static_cast<int>(K), 1.f, A + r0 * rsa, static_cast<int>(ta ? M : K), B,
                static_cast<int>(N), 0.f, C + r0 * N, static_cast<int>(N));
  };
  const double gflop = 2e-9 * static_cast<double>(M * N * K);
  auto rate = [&](const std::function<void()>& f) { return gflop / (1e-9 * time_ns(f)); };
  const double ours_1 = rate([&] { ours(0, M); }), blas_1 = rate([&] { openblas(0, M); });
  const double ours_p = rate([&] { parallel_for(M, 64, ours); });
  const double blas_p = rate([&] { parallel_for(M, 64, openblas); });
  char shape[64];
  std::snprintf(shape, sizeof shape, "%s M%lld K%lld N%lld", name, static_cast<long long>(M), static_cast<long long>(K),
                static_cast<long long>(N));
  std::printf("  %-36s %10.1f %10.1f %12.1f %12.1f\n", shape, ours_1, blas_1, ours_p, blas_p);
}

// dW (M = out, N = in) += dy^T x over one panel of K = 256 rows, beta 1, on this thread: GFLOP/s
// of small_gemm (dy^T read in place), of small_gemm_packed_a where the build has it (tiles
// narrower than AVX-512, which is where linear's backward uses it) and of OpenBLAS.
static void weight_grad_panel_row(const char* name, int64_t out, int64_t in) {
  constexpr int64_t K = 256;
  Generator gen(5);
  Tensor dy = Tensor::randn({K, out}, gen), x = Tensor::randn({K, in}, gen), dw = Tensor::zeros({out, in});
  const float *D = dy.data<float>(), *X = x.data<float>();
  float* W = dw.data<float>();
  const double gflop = 2e-9 * static_cast<double>(out * in * K);
  auto rate = [&](const std::function<void()>& f) { return gflop / (1e-9 * time_ns(f)); };
  const double in_place = rate([&] { kernels::small_gemm<float>(out, in, K, 1.f, D, 1, out, X, in, 1.f, W, in); });
#if !defined(__AVX512F__)
  const double packed =
      rate([&] { kernels::small_gemm_packed_a<float>(out, in, K, 1.f, D, 1, out, X, in, 1.f, W, in); });
#else
  const double packed = 0;  // not in an AVX-512 build
#endif
  const double blas = rate([&] {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(out), static_cast<int>(in),
                static_cast<int>(K), 1.f, D, static_cast<int>(out), X, static_cast<int>(in), 1.f, W,
                static_cast<int>(in));
  });
  char shape[64];
  std::snprintf(shape, sizeof shape, "%s M%lld N%lld K%lld", name, static_cast<long long>(out),
                static_cast<long long>(in), static_cast<long long>(K));
  std::printf("  %-36s %10.1f %10.1f %10.1f\n", shape, in_place, packed, blas);
}

int main(int, char** argv) {
  sf::start_program(argv);  // first: the BLAS kernels for this CPU (app/startup.h)
  init_threads_from_env();
  std::printf("scratchformer bench_ops (float32, %d BLAS threads)\n\n", num_threads());

  std::printf("Per-op overhead on (4, 4) tensors, ns per call:\n");
  std::printf("  %-22s %12s %14s %18s\n", "op", "no_grad", "grad recorded", "forward+backward");
  overhead_row("add", [](const Tensor& a, const Tensor& b) { return add(a, b); });
  overhead_row("mul", [](const Tensor& a, const Tensor& b) { return mul(a, b); });
  overhead_row("add (4,4)+(4) bcast", [](const Tensor& a, const Tensor& b) { return add(a, b); }, {4});
  overhead_row("tanh", [](const Tensor& a, const Tensor&) { return tanh(a); });
  overhead_row("matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  overhead_row("softmax", [](const Tensor& a, const Tensor&) { return softmax(a, -1); });
  overhead_row("sum", [](const Tensor& a, const Tensor&) { return sum(a); });
  overhead_row("layer_norm", [](const Tensor& a, const Tensor&) { return layer_norm(a, Tensor(), Tensor()); });

  std::printf("\nmatmul, GFLOP/s (forward = 1 gemm; forward+backward = 3 gemms):\n");
  std::printf("  %-22s %14s %14s %9s %16s\n", "shape", "raw sgemm", "sf::matmul", "ratio", "fwd+bwd");
  matmul_row(128, 128, 128);
  matmul_row(512, 512, 512);
  matmul_row(4096, 128, 512);
  matmul_row(512, 2048, 512);

  std::printf("\nattention_packed forward+backward, ms per call (best of 3):\n");
  std::printf("  %-22s %14s %14s %9s\n", "shape", "non-causal", "causal", "ratio");
  attention_row(32, 32, 4, 16);   // bench_gpt tiny
  attention_row(16, 128, 4, 32);  // bench_gpt small
  attention_row(8, 256, 6, 64);   // bench_gpt medium

  std::printf("\nsmall's linear products (M = 2048 rows), GFLOP/s, warm operands; one core's FMA peak first:\n");
  std::printf("  FMA peak, one core: %.1f GFLOP/s (%d-float vectors)\n", fma_peak_gflops(),
              static_cast<int>(xsimd::batch<float>::size));
  std::printf("  %-36s %10s %10s %12s %12s\n", "product", "ours 1T", "BLAS 1T", "ours pool", "BLAS pool");
  product_row("qkv forward", 2048, 128, 384, false);
  product_row("fc forward", 2048, 128, 512, false);
  product_row("fc proj forward", 2048, 512, 128, false);
  product_row("qkv input grad", 2048, 384, 128, false);
  product_row("fc proj input grad", 2048, 128, 512, false);
  product_row("fc weight grad", 512, 2048, 128, true);
  product_row("fc proj weight grad", 128, 2048, 512, true);

  std::printf("\nweight gradients over one 256-row panel (linear's backward), one core, GFLOP/s%s:\n",
              xsimd::batch<float>::size >= 16 ? " (packed_a: AVX2 builds only)" : "");
  std::printf("  %-36s %10s %10s %10s\n", "product", "in place", "packed_a", "BLAS 1T");
  for (auto [name, out, in] : {std::tuple{"small qkv", 384, 128},
                               {"small fc", 512, 128},
                               {"small fc proj", 128, 512},
                               {"medium fc", 1536, 384},
                               {"medium fc proj", 384, 1536}})
    weight_grad_panel_row(name, out, in);
  return 0;
}
