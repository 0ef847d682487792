// Every fused kernel against its plain xtensor reference (autograd/reference.h), and the xtensor
// adapters (autograd/xtensor.h).
//
// Tolerances: in float64 both sides compute the same formula with sums in another order, so they
// agree to 1e-12 relative. In float32 the kernel is compared with the float64 reference of the
// same inputs: the kernel's own rounding (about 6e-8 per operation, sums of up to a few hundred
// terms) stays below 2e-6 relative. fp16 / bf16 rounding must agree bit for bit.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "autograd/cpu/head_gemm.h"
#include "autograd/cpu/lowp.h"
#include "autograd/cpu/simd.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"
#include "autograd/reference.h"
#include "autograd/xtensor.h"

using namespace sf;
namespace ref = sf::reference;

template <class T>
static double tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 2e-6;
}

// |got - want| <= tol * max(1, |want|) elementwise; reports the first index that fails.
template <class A, class B>
static void check_close(const A& got, const B& want, double tol, const char* what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  auto g = xt::flatten(got);
  auto w = xt::flatten(want);
  for (size_t i = 0; i < g.size(); ++i) {
    double gi = static_cast<double>(g(i)), wi = static_cast<double>(w(i));
    if (std::isinf(wi) || std::isnan(wi)) {
      CHECK(((std::isnan(wi) && std::isnan(gi)) || gi == wi));
      continue;
    }
    if (!(std::fabs(gi - wi) <= tol * std::max(1.0, std::fabs(wi)))) {
      FAIL_CHECK("index " << i << ": kernel " << gi << ", reference " << wi);
      return;
    }
  }
}

template <class T>
static Tensor random_tensor(const Shape& shape, uint64_t seed, double stddev = 1.5) {
  Generator gen(seed);
  return Tensor::randn(shape, gen, stddev, dtype_of<T>());
}

// The float64 copy of a tensor as an (N, C) array: the reference's input.
// |got - want| <= bound elementwise (a rounding bound computed for each element); reports the
// first index that fails.
template <class A, class B, class C>
static void check_within(const A& got, const B& want, const C& bound, const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  auto g = xt::flatten(got);
  auto w = xt::flatten(want);
  auto e = xt::flatten(bound);
  for (size_t i = 0; i < g.size(); ++i) {
    const double gi = static_cast<double>(g(i)), wi = static_cast<double>(w(i)), ei = static_cast<double>(e(i));
    if (!(std::fabs(gi - wi) <= ei)) {
      FAIL_CHECK("index " << i << ": kernel " << gi << ", reference " << wi << ", bound " << ei);
      return;
    }
  }
}

static ref::Rows<double> rows_f64(const Tensor& t) {
  Tensor d = t.to(DType::f64).detach();
  int64_t C = t.size(-1);
  ref::Rows<double> r =
      xt::reshape_view(as_xtensor<double>(d), {static_cast<size_t>(t.numel() / C), static_cast<size_t>(C)});
  return r;
}

TEST_CASE_TEMPLATE("softmax and log_softmax match the reference, masked rows included", T, float, double) {
  for (int64_t C : {1, 7, 64, 129}) {
    Tensor x = random_tensor<T>({5, C}, 11 + static_cast<uint64_t>(C), 4.0);
    auto xv = as_xtensor<T>(x);
    xt::row(xv, 1) = -std::numeric_limits<T>::infinity();  // a fully masked row gives zeros
    if (C > 1) xv(2, 0) = -std::numeric_limits<T>::infinity();
    xv(3, 0) = T(80);  // a large logit: e^80 overflows float if the max is not subtracted
    check_close(as_xtensor<T>(softmax(x, -1)), ref::softmax(rows_f64(x)), tolerance<T>(), "softmax");
    // A NaN logit makes its whole row NaN (in double, xsimd's exp must not see it: simd.h).
    Tensor with_nan = x.clone();
    as_xtensor<T>(with_nan)(4, C / 2) = std::numeric_limits<T>::quiet_NaN();
    as_xtensor<T>(with_nan)(1, C / 2) = std::numeric_limits<T>::quiet_NaN();  // among masked entries
    const Tensor probs = softmax(with_nan, -1);  // (kept: as_xtensor adapts its storage, not a copy)
    auto p = as_xtensor<T>(probs);
    for (int64_t j = 0; j < C; ++j) CHECK((std::isnan(p(4, j)) && std::isnan(p(1, j))));
    // The same along the other dimension (the strided rows): column 0 of a (2, C) tensor holding
    // only -inf and a NaN.
    Tensor cols = Tensor::full({2, C}, -std::numeric_limits<T>::infinity(), with_nan.dtype());
    as_xtensor<T>(cols)(1, 0) = std::numeric_limits<T>::quiet_NaN();
    const Tensor col_probs = softmax(cols, 0);
    CHECK((std::isnan(as_xtensor<T>(col_probs)(0, 0)) && std::isnan(as_xtensor<T>(col_probs)(1, 0))));
    Tensor finite = random_tensor<T>({5, C}, 3 + static_cast<uint64_t>(C), 4.0);
    check_close(as_xtensor<T>(log_softmax(finite, -1)), ref::log_softmax(rows_f64(finite)), tolerance<T>(),
                "log_softmax");
  }
}

// The row maximum every softmax subtracts (a fold of the SIMD lanes in halves): the largest value
// put at every position of rows that fill whole vectors, part of one, or several and a tail.
TEST_CASE_TEMPLATE("simd::row_max finds the largest value wherever it sits", T, float, double) {
  constexpr int64_t W = xsimd::batch<T>::size;
  for (int64_t n : {int64_t(1), W - 1, W, W + 1, 2 * W, 3 * W + 5}) {
    for (int64_t at = 0; at < n; ++at) {
      std::vector<T> row(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) row[static_cast<size_t>(i)] = T(-3) - T(i % 7) / T(8);  // all below -3
      row[static_cast<size_t>(at)] = T(-2.5);
      CAPTURE(n);
      CAPTURE(at);
      CHECK(simd::row_max(row.data(), n) == T(-2.5));
    }
  }
  const T ninf = -std::numeric_limits<T>::infinity();
  std::vector<T> masked(static_cast<size_t>(2 * W), ninf);
  CHECK(simd::row_max(masked.data(), 2 * W) == ninf);  // a fully masked row
}

// The masked tail of a softmax row, filled as one vector store: the same array as a plain fill,
// for every start in the first three vectors, up to the next whole vector and (value by value)
// up to other ends.
TEST_CASE_TEMPLATE("simd::fill_vector_tail fills exactly the values from its start to its end", T, float, double) {
  constexpr int64_t W = xsimd::batch<T>::size;
  const T ninf = -std::numeric_limits<T>::infinity();
  for (int64_t from = 0; from <= 3 * W; ++from) {
    const int64_t whole = (from + W - 1) / W * W;
    for (int64_t to : {whole, from + 1, std::min(from + 2, 4 * W)}) {
      std::vector<T> got(static_cast<size_t>(4 * W)), want;
      for (size_t i = 0; i < got.size(); ++i) got[i] = T(i) + T(0.5);
      want = got;
      std::fill(want.begin() + from, want.begin() + std::max(from, to), ninf);
      simd::fill_vector_tail(got.data(), from, to, ninf);
      CAPTURE(from);
      CAPTURE(to);
      CHECK(got == want);
    }
  }
}

TEST_CASE_TEMPLATE("cross_entropy equals NLL of the reference log-softmax, with ignore_index and smoothing", T, float,
                   double) {
  Tensor logits = random_tensor<T>({6, 11}, 5, 3.0);
  IntTensor targets({6}, {0, 10, 3, -100, 7, 7});
  std::vector<int64_t> t = {0, 10, 3, -100, 7, 7};
  for (double eps : {0.0, 0.1}) {
    double got = cross_entropy(logits, targets, -100, eps).item();
    double want = ref::nll_loss(ref::log_softmax(rows_f64(logits)), t, -100, eps);
    INFO("label_smoothing " << eps);
    CHECK(std::fabs(got - want) <= tolerance<T>() * std::max(1.0, std::fabs(want)));
  }
}

TEST_CASE_TEMPLATE("layer_norm's row kernels (forward and backward) match the reference", T, float, double) {
  // 19 and 37 leave vector tails, 70 rows fill several 32-row blocks of the backward
  for (int64_t C : {1, 19, 37, 64}) {
    Tensor x = random_tensor<T>({70, C}, 21 + static_cast<uint64_t>(C));
    // A row with a large mean (1000, spread 1.5): its variance must not cancel. In float32 that
    // row is conditioned 1000 / 1.5 times worse than the others; its own test is below.
    if (std::is_same_v<T, double>) {
      auto xv = as_xtensor<T>(x);
      xt::row(xv, 0) += T(1000);
    }
    Tensor w = random_tensor<T>({C}, 22).requires_grad_();
    Tensor b = random_tensor<T>({C}, 23).requires_grad_();
    Tensor dy = random_tensor<T>({70, C}, 24);
    x.requires_grad_();
    Tensor y = layer_norm(x, w, b, 1e-5);
    y.backward(dy);
    xt::xtensor<double, 1> w64 = as_xtensor<double>(w.to(DType::f64).detach());
    xt::xtensor<double, 1> b64 = as_xtensor<double>(b.to(DType::f64).detach());
    INFO("C = " << C);
    check_close(as_xtensor<T>(y.detach()), ref::layer_norm(rows_f64(x), w64, b64, 1e-5), tolerance<T>(), "y");
    auto r = ref::layer_norm_backward(rows_f64(x), w64, rows_f64(dy), 1e-5);
    // dx is rstd times a difference of means: rows with a large mean (row 0) lose digits in float32
    check_close(as_xtensor<T>(x.grad()), r.dx, std::is_same_v<T, double> ? 1e-10 : 2e-4, "dx");
    check_close(as_xtensor<T>(w.grad()), r.dw, std::is_same_v<T, double> ? 1e-11 : 2e-5, "dw");
    check_close(as_xtensor<T>(b.grad()), r.db, std::is_same_v<T, double> ? 1e-11 : 2e-5, "db");
  }
}

TEST_CASE("layer_norm in float32 on rows with a large mean: error as the conditioning predicts") {
  // x = 1000 + N(0, 1.5): x - mean loses about |mean| / std = 670 times float32's 6e-8, so the
  // normalised values carry an error of about 4e-5; allow 8 times that.
  Tensor x = random_tensor<float>({8, 64}, 61);
  auto xv = as_xtensor<float>(x);
  xv += 1000.0f;
  Tensor y = layer_norm(x, Tensor(), Tensor(), 1e-5);
  xt::xtensor<double, 1> ones = xt::ones<double>({64}), zeros = xt::zeros<double>({64});
  const double tol = 8 * 6e-8 * 1000 / 1.5;
  check_close(as_xtensor<float>(y), ref::layer_norm(rows_f64(x), ones, zeros, 1e-5), tol, "y");
}

TEST_CASE_TEMPLATE("gelu and its gradient match the reference, exact and tanh forms", T, float, double) {
  for (GeluApprox approx : {GeluApprox::none, GeluApprox::tanh}) {
    bool tanh_form = approx == GeluApprox::tanh;
    Tensor x = random_tensor<T>({3, 67}, 31, 3.0).requires_grad_();
    Tensor y = gelu(x, approx);
    y.backward(Tensor::ones(y.shape(), dtype_of<T>()));
    xt::xarray<double> x64 = as_xtensor<double>(x.detach().to(DType::f64));
    INFO("tanh form " << tanh_form);
    check_close(as_xtensor<T>(y.detach()), ref::gelu(x64, tanh_form), tolerance<T>(), "gelu");
    check_close(as_xtensor<T>(x.grad()), ref::gelu_grad(x64, tanh_form), tolerance<T>(), "gelu'");
  }
}

TEST_CASE_TEMPLATE("linear_gelu and its gradients match the reference, row and column blocks, panel backward", T, float,
                   double) {
  // (rows, in, out): one small block; row blocks of the split product; column blocks (few rows);
  // then linear's panel backward (512 rows or more): 2 chunks, rows not a multiple of 16; 4 chunks;
  // a weight of 2^15 to 2^17 elements, whose forward runs in blocks of 64 rows (the last of 24);
  // last a weight over 2^17 elements, on small_gemm with W^T and W packed in an AVX-512 build, on
  // OpenBLAS in another (ops_matmul.cpp): whichever this build runs
  for (auto [rows, in, out] : {std::array<int64_t, 3>{5, 7, 9},
                               {256, 64, 96},
                               {40, 64, 512},
                               {600, 24, 40},
                               {4200, 16, 24},
                               {600, 128, 300},
                               {520, 384, 360}})
    for (GeluApprox approx : {GeluApprox::none, GeluApprox::tanh}) {
      const bool tanh_form = approx == GeluApprox::tanh;
      Tensor x = random_tensor<T>({rows, in}, 51).requires_grad_();
      Tensor w = random_tensor<T>({out, in}, 52, 0.2).requires_grad_();
      Tensor b = random_tensor<T>({out}, 53).requires_grad_();
      Tensor dy = random_tensor<T>({rows, out}, 54, 1.0);
      Tensor y = linear_gelu(x, w, b, approx);
      y.backward(dy);
      ref::LinearGelu<double> want = ref::linear_gelu(
          rows_f64(x), rows_f64(w), xt::xtensor<double, 1>(as_xtensor<double>(b.detach().to(DType::f64))), rows_f64(dy),
          tanh_form);
      INFO("rows " << rows << " in " << in << " out " << out << " tanh form " << tanh_form);
      // Each result is a sum of n products, whose rounding in type T is bounded by
      // gamma_n = n u / (1 - n u) times the sum of the products' magnitudes (Higham, Accuracy and
      // Stability, 3.1), in any order of summation, u = eps(T) / 2. The error of pre = x W^T + b
      // reaches y through |GELU'| <= 1.13 and dpre = dy GELU'(pre) through |GELU''| <= 0.8; then
      // dx, dW, db sum dpre's products again. Plus 8 u |value| for the rounding of GELU itself, all
      // times a margin of 2.
      const double u = std::numeric_limits<T>::epsilon() / 2;
      auto gamma = [u](int64_t n) { return n * u / (1 - n * u); };
      const ref::Rows<double> ax = xt::abs(rows_f64(x)), aw = xt::abs(rows_f64(w)), ady = xt::abs(rows_f64(dy));
      const xt::xtensor<double, 1> ab = xt::abs(as_xtensor<double>(b.detach().to(DType::f64)));
      const ref::Rows<double> pre_err = gamma(in + 1) * (xt::linalg::dot(ax, xt::transpose(aw)) + ab);  // (N, out)
      const ref::Rows<double> dpre_abs = ady * 1.13;  // |dpre| <= |dy| |GELU'|
      const ref::Rows<double> dpre_err = ady * 0.8 * pre_err + 8 * u * dpre_abs;
      const ref::Rows<double> y_bound = 2 * (1.13 * pre_err + 8 * u * xt::abs(want.y));
      const ref::Rows<double> dx_bound =
          2 * (gamma(out) * xt::linalg::dot(dpre_abs, aw) + xt::linalg::dot(dpre_err, aw));
      const ref::Rows<double> dw_bound = 2 * (gamma(rows) * xt::linalg::dot(xt::transpose(dpre_abs), ax) +
                                              xt::linalg::dot(xt::transpose(dpre_err), ax));
      const xt::xtensor<double, 1> db_bound = 2 * (gamma(rows) * xt::sum(dpre_abs, {0}) + xt::sum(dpre_err, {0}));
      check_within(as_xtensor<T>(y.detach()), want.y, y_bound, "y");
      check_within(as_xtensor<T>(x.grad()), want.dx, dx_bound, "dx");
      check_within(as_xtensor<T>(w.grad()), want.dw, dw_bound, "dW");
      check_within(as_xtensor<T>(b.grad()), want.db, db_bound, "db");
    }
}

TEST_CASE_TEMPLATE("attention matches the reference per (batch, head): causal, window, S != T, D on both gemm paths", T,
                   float, double) {
  // In float32 the scores are D-term dot products: their worst-case rounding, D eps sum |q k|, is
  // about 5e-5 at D = 64 and the typical error its square root; 1e-5 relative lies between.
  const double attention_tol = std::is_same_v<T, double> ? 1e-12 : 1e-5;
  struct Case {
    int64_t Tq, S, D;
    bool causal;
    int64_t window;
  };
  for (Case c :
       {Case{5, 5, 8, false, 0}, Case{130, 130, 32, true, 0}, Case{3, 70, 33, true, 0}, Case{66, 66, 64, true, 9},
        Case{1, 1, 16, true, 0}, Case{40, 40, kernels::kSmallHeadMaxD + 1, true, 0}}) {  // OpenBLAS with AVX-512 too
    Tensor q = random_tensor<T>({2, 2, c.Tq, c.D}, 41), k = random_tensor<T>({2, 2, c.S, c.D}, 42),
           v = random_tensor<T>({2, 2, c.S, c.D}, 43);
    AttentionOptions options;
    options.causal = c.causal;
    options.window = c.window;
    Tensor p;
    Tensor out = attention(q, k, v, options, &p);
    // copies: a view of the temporary q.to(f64) would outlive its buffer
    xt::xarray<double> q64 = as_xtensor<double>(q.to(DType::f64).detach()),
                       k64 = as_xtensor<double>(k.to(DType::f64).detach()),
                       v64 = as_xtensor<double>(v.to(DType::f64).detach());
    auto out_v = as_xtensor<T>(out);
    auto p_v = as_xtensor<T>(p);
    INFO("T " << c.Tq << " S " << c.S << " D " << c.D << " causal " << c.causal << " window " << c.window);
    for (size_t bi = 0; bi < 2; ++bi)
      for (size_t h = 0; h < 2; ++h) {
        ref::Rows<double> probs;
        ref::Rows<double> want = ref::attention<double>(
            xt::view(q64, bi, h, xt::all(), xt::all()), xt::view(k64, bi, h, xt::all(), xt::all()),
            xt::view(v64, bi, h, xt::all(), xt::all()), c.causal, c.window, 1.0 / std::sqrt(double(c.D)), &probs);
        check_close(xt::eval(xt::view(out_v, bi, h, xt::all(), xt::all())), want, attention_tol, "out");
        check_close(xt::eval(xt::view(p_v, bi, h, xt::all(), xt::all())), probs, attention_tol, "P");
      }
  }
}

TEST_CASE("fp16 and bf16 rounding equal the grid formula bit for bit") {
  std::vector<float> values = {0.0f,
                               -0.0f,
                               1.0f,
                               65504.0f,
                               65519.99f,
                               65520.0f,
                               1e-8f,
                               2.98e-8f,
                               2.99e-8f,
                               6.1e-5f,
                               1.0009765625f,
                               1.00048828125f,
                               3.3895e38f,
                               3.4e38f,
                               std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::denorm_min()};
  // and one float in every 4099 bit patterns: every exponent, both signs, subnormals
  for (uint64_t bits = 0; bits < (1ull << 32); bits += 4099)
    values.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  int64_t checked = 0;
  for (float x : values) {
    if (std::isnan(x)) {
      CHECK(std::isnan(round_to_fp16(x)));
      CHECK(std::isnan(round_to_bf16(x)));
      continue;
    }
    float h = round_to_fp16(x), want_h = ref::round_fp16(x);
    float bf = round_to_bf16(x), want_bf = ref::round_bf16(x);
    if (std::bit_cast<uint32_t>(h) != std::bit_cast<uint32_t>(want_h))
      FAIL_CHECK("fp16 of " << x << ": " << h << " vs " << want_h);
    if (std::bit_cast<uint32_t>(bf) != std::bit_cast<uint32_t>(want_bf))
      FAIL_CHECK("bf16 of " << x << ": " << bf << " vs " << want_bf);
    ++checked;
  }
  CHECK(checked > 1000000);
  // and the array form of the reference agrees with round_inplace on a tensor
  Tensor t = random_tensor<float>({4, 33}, 51, 3e4);
  xt::xarray<float> before = as_xtensor<float>(t);
  round_inplace(t, Precision::fp16);
  check_close(as_xtensor<float>(t), ref::round_fp16(before), 0.0, "round_inplace fp16");
}

TEST_CASE("as_xtensor is a view (no copy) and to_tensor evaluates an expression into a Tensor") {
  Tensor w = Tensor::from_vector({1, -2, 3, -4, 5, -6}, {2, 3});
  auto x = as_xtensor<float>(w);
  CHECK(x.dimension() == 2);
  CHECK(x.shape(0) == 2);
  CHECK(x.shape(1) == 3);
  CHECK(&x(0, 0) == w.data<float>());  // the same memory
  x *= 2.0f;                           // writes reach the tensor
  CHECK(w.at({1, 2}) == -12.0);
  CHECK(xt::amax(xt::abs(x))() == 12.0f);
  Tensor r = to_tensor(xt::tanh(x) + 1.0f);
  CHECK(r.shape() == Shape{2, 3});
  CHECK(r.dtype() == DType::f32);
  CHECK(r.at({0, 0}) == doctest::Approx(std::tanh(2.0f) + 1.0f));
  Tensor d = to_tensor(xt::xarray<double>{{1.5, 2.5}});
  CHECK(d.dtype() == DType::f64);
  CHECK(d.shape() == Shape{1, 2});
  // the dtype is checked
  CHECK_THROWS_AS(as_xtensor<double>(w), ShapeError);
}
