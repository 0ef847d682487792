// small_gemm (the direct kernel of attention's small heads and of linear layers with small
// weights) against its plain triple loop, over many odd sizes: ragged tails in every dimension, A
// and A^T, strides wider than the matrix, alpha/beta 0, 1 and other values, and a bias, in float
// and double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "autograd/cpu/head_gemm.h"
#include "autograd/cpu/small_gemm.h"
#include "autograd/ops.h"
#include "autograd/ops_attention.h"

using namespace sf;
using namespace sf::kernels;

namespace {

// One product on both kernels; checks every element of C and that C's padding is untouched.
// Both sum the same K products in increasing k, with or without fused multiply-adds, then scale
// by alpha and add beta c: each result is within (K + 2) eps (|alpha| sum_k |a b| + |beta c|) of
// the exact value (the recursive-summation bound), so the two differ by at most twice that.
template <class T>
void check_product(int64_t M, int64_t N, int64_t K, T alpha, T beta, bool ta, int64_t pad, std::mt19937& rng,
                   bool with_bias = false) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int64_t rows_a = ta ? K : M, cols_a = ta ? M : K;  // A as stored
  const int64_t lda = cols_a + pad, ldb = N + pad, ldc = N + pad;
  std::vector<T> A(static_cast<size_t>(rows_a * lda + 1)), B(static_cast<size_t>(K * ldb + 1));
  std::vector<T> C(static_cast<size_t>(M * ldc + 1));
  for (T& x : A) x = static_cast<T>(u(rng));
  for (T& x : B) x = static_cast<T>(u(rng));
  for (T& x : C) x = static_cast<T>(u(rng));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  if (beta == T(0))  // beta 0 must not read C: fill it with NaN, which would show up
    for (T& x : C) x = nan;
  std::vector<T> bias(static_cast<size_t>(N));
  for (T& x : bias) x = static_cast<T>(u(rng));
  const T* b = with_bias ? bias.data() : nullptr;
  const int64_t rsa = ta ? 1 : lda, csa = ta ? lda : 1;
  std::vector<T> got = C, want = C;
  small_gemm(M, N, K, alpha, A.data(), rsa, csa, B.data(), ldb, beta, got.data(), ldc, b);
  small_gemm_reference(M, N, K, alpha, A.data(), rsa, csa, B.data(), ldb, beta, want.data(), ldc, b);
  const double eps = std::numeric_limits<T>::epsilon();
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < ldc; ++n) {
      const size_t i = static_cast<size_t>(m * ldc + n);
      if (n >= N) {  // padding between rows: never written
        CHECK((std::isnan(got[i]) ? std::isnan(C[i]) : got[i] == C[i]));
        continue;
      }
      double magnitude = beta == T(0) ? 0.0 : std::fabs(double(beta) * double(C[i]));
      if (b) magnitude += std::fabs(double(b[n]));
      for (int64_t k = 0; k < K; ++k)
        magnitude += std::fabs(double(alpha) * double(A[static_cast<size_t>(m * rsa + k * csa)]) *
                               double(B[static_cast<size_t>(k * ldb + n)]));
      const double tol = 2.0 * double(K + 2) * eps * magnitude;
      INFO("M " << M << " N " << N << " K " << K << " alpha " << alpha << " beta " << beta << " ta " << ta << " pad "
                << pad << " at (" << m << ", " << n << ")");
      REQUIRE(!std::isnan(got[i]));
      CHECK(std::fabs(double(got[i]) - double(want[i])) <= tol);
    }
  }
}

template <class T>
void check_many_sizes() {
  std::mt19937 rng(7);
  const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 70};
  const T scalars[][2] = {{1, 0}, {1, 1}, {0, 1}, {T(0.125), T(-0.5)}, {T(-1.7), T(0)}};
  int count = 0;
  for (int64_t M : sizes)
    for (int64_t N : sizes)
      for (int64_t K : {int64_t(1), int64_t(3), int64_t(16), int64_t(37), int64_t(70)}) {
        const T* ab = scalars[count % 5];
        check_product<T>(M, N, K, ab[0], ab[1], count % 2 == 1, count % 3 == 0 ? 0 : 5 + count % 11, rng);
        ++count;
      }
}

}  // namespace

TEST_CASE("small_gemm matches the triple loop in float over odd sizes") { check_many_sizes<float>(); }

TEST_CASE("small_gemm matches the triple loop in double over odd sizes") { check_many_sizes<double>(); }

TEST_CASE("small_gemm with every alpha and beta and both layouts at one ragged size") {
  std::mt19937 rng(11);
  for (bool ta : {false, true})
    for (double alpha : {0.0, 1.0, -0.3})
      for (double beta : {0.0, 1.0, 2.5}) {
        check_product<float>(13, 27, 19, float(alpha), float(beta), ta, 9, rng);
        check_product<double>(13, 27, 19, alpha, beta, ta, 9, rng);
      }
}

// The bias of a linear layer, added to every row as each tile is stored: every tile shape (full
// vectors, one vector, the scalar column tail, ragged rows), with beta 0 (C never read) and 1.
TEST_CASE("small_gemm with a bias adds it to every row, at every tile shape") {
  std::mt19937 rng(13);
  for (int64_t M : {1, 5, 8, 9, 17})
    for (int64_t N : {1, 7, 16, 17, 33, 65})
      for (bool ta : {false, true}) {
        check_product<float>(M, N, 19, 1.0f, 0.0f, ta, 3, rng, true);
        check_product<float>(M, N, 19, -0.5f, 1.0f, ta, 0, rng, true);
        check_product<double>(M, N, 23, 1.0, 0.0, ta, 3, rng, true);
      }
}

// A B over kPackedBlockBytes goes through small_gemm_packed: several blocks of columns, a last
// panel narrower than the widest tile (one vector, then the scalar column tail), ragged rows.
TEST_CASE("small_gemm on a B larger than one packed block matches the triple loop") {
  std::mt19937 rng(17);
  const int64_t K = 130, N = kPackedBlockBytes / (K * int64_t(sizeof(float))) * 3 + 21;  // three blocks and more
  REQUIRE(K * N * int64_t(sizeof(float)) > 2 * kPackedBlockBytes);
  check_product<float>(21, N, K, 1.0f, 0.0f, false, 3, rng, true);
  check_product<float>(19, N, K, -0.5f, 1.0f, true, 0, rng);
  check_product<double>(17, N / 2, K, 0.25, 2.0, false, 5, rng, true);
}

// n values uniform in [-1, 1).
template <class T>
std::vector<T> random_values(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(u(rng));
  return v;
}

// Packing only moves B's values (and op(A)'s in small_gemm_packed_a): every element of C is still the same sum in the same order by
// the same tile, so both ways give the same bits, on any shape.
template <class T>
void check_packed_bits(int64_t M, int64_t N, int64_t K, T beta, bool ta, bool with_bias, std::mt19937& rng) {
  auto filled = [&](int64_t n) { return random_values<T>(n, rng); };
  const int64_t ldb = N + 3, ldc = N + 5, lda = (ta ? M : K) + 2;
  const std::vector<T> A = filled((ta ? K : M) * lda), B = filled(K * ldb), bias = filled(N), C = filled(M * ldc);
  std::vector<T> in_place = C, packed = C, packed_a = C;
  const int64_t rsa = ta ? 1 : lda, csa = ta ? lda : 1;
  const T* b = with_bias ? bias.data() : nullptr;
  small_gemm_in_place(M, N, K, T(0.75), A.data(), rsa, csa, B.data(), ldb, beta, in_place.data(), ldc, b);
  small_gemm_packed(M, N, K, T(0.75), A.data(), rsa, csa, B.data(), ldb, beta, packed.data(), ldc, b);
#if !defined(__AVX512F__)  // small_gemm_packed_a exists in builds with narrower tiles only
  small_gemm_packed_a(M, N, K, T(0.75), A.data(), rsa, csa, B.data(), ldb, beta, packed_a.data(), ldc, b);
#else
  packed_a = in_place;
#endif
  INFO("M " << M << " N " << N << " K " << K << " beta " << beta << " ta " << ta << " bias " << with_bias);
  CHECK(std::memcmp(in_place.data(), packed.data(), in_place.size() * sizeof(T)) == 0);
  CHECK(std::memcmp(in_place.data(), packed_a.data(), in_place.size() * sizeof(T)) == 0);
}

// A B packed once (as linear's W^T and W): pack_panels over two ranges of panels, as two threads
// do, then small_gemm_prepacked; and W^T made straight in panels by transpose_block, as linear's
// forward does. Both give the bits of the in-place product.
template <class T>
void check_prepacked_bits(int64_t M, int64_t N, int64_t K, bool ta, std::mt19937& rng) {
  auto filled = [&](int64_t n) { return random_values<T>(n, rng); };
  constexpr int64_t P = kPanelWidth<T>;
  const int64_t lda = (ta ? M : K) + 1, rsa = ta ? 1 : lda, csa = ta ? lda : 1;
  const std::vector<T> A = filled((ta ? K : M) * lda), W = filled(N * K), bias = filled(N);  // W (N, K)
  std::vector<T> Bt(static_cast<size_t>(K * N));                                             // W^T (K, N)
  transpose_block(N, K, W.data(), K, Bt.data());
  const int64_t panels = (N + P - 1) / P, half = panels / 2;
  std::vector<T> packed(static_cast<size_t>(K * N)), transposed(packed.size());
  pack_panels(K, int64_t(0), std::min(N, half * P), Bt.data(), N, packed.data());
  pack_panels(K, half * P, N, Bt.data(), N, packed.data() + half * P * K);
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t width = std::min(P, N - p * P);
    transpose_block(width, K, W.data() + p * P * K, K, transposed.data() + p * P * K, width);
  }
  CHECK(packed == transposed);
  std::vector<T> in_place(static_cast<size_t>(M * N)), prepacked(in_place.size(), T(-1));
  small_gemm_in_place(M, N, K, T(1), A.data(), rsa, csa, Bt.data(), N, T(0), in_place.data(), N, bias.data());
  small_gemm_prepacked(M, N, K, T(1), A.data(), rsa, csa, packed.data(), T(0), prepacked.data(), N, bias.data());
  INFO("M " << M << " N " << N << " K " << K << " ta " << ta);
  CHECK(std::memcmp(in_place.data(), prepacked.data(), in_place.size() * sizeof(T)) == 0);
}

TEST_CASE("small_gemm_prepacked on panels from pack_panels or transpose_block gives the in-place bits") {
  std::mt19937 rng(23);
  for (int64_t N : {1, 15, 33, 64, 100, 2000})
    for (int64_t K : {1, 9, 130, 600}) {
      check_prepacked_bits<float>(19, N, K, N % 2 == 0, rng);
      check_prepacked_bits<double>(9, N, K, N % 2 == 1, rng);
    }
}

TEST_CASE("small_gemm_packed and small_gemm_packed_a give the same bits as small_gemm_in_place") {
  std::mt19937 rng(19);
  for (int64_t M : {1, 7, 8, 17})
    for (int64_t N : {1, 15, 16, 31, 32, 33, 100, 1100})
      for (int64_t K : {1, 37, 300}) {
        check_packed_bits<float>(M, N, K, 0.0f, M % 2 == 0, N % 2 == 1, rng);
        check_packed_bits<float>(M, N, K, 1.5f, M % 2 == 1, N % 2 == 0, rng);
        check_packed_bits<double>(M, N, K, 0.0, M % 2 == 1, true, rng);
      }
}

TEST_CASE("small_gemm with a bias and K = 0 gives beta C + bias") {
  std::vector<double> C = {1, 2, 3, 4}, A(1), B(1), bias = {10, 20};
  small_gemm(2, 2, 0, 1.0, A.data(), 1, 1, B.data(), 2, 0.5, C.data(), 2, bias.data());
  CHECK(C == std::vector<double>{10.5, 21, 11.5, 22});
}

TEST_CASE("small_gemm with K = 0 scales C by beta") {
  std::vector<double> C = {1, 2, 3, 4}, A(1), B(1);
  small_gemm(2, 2, 0, 1.0, A.data(), 1, 1, B.data(), 2, 0.5, C.data(), 2);
  CHECK(C == std::vector<double>{0.5, 1, 1.5, 2});
}

TEST_CASE("transpose_block reads a strided block and writes its dense transpose") {
  const std::vector<float> src = {1, 2, 3, 0,  // (2, 3) with rows 4 apart
                                  4, 5, 6, 0};
  std::vector<float> dst(6);
  transpose_block(2, 3, src.data(), 4, dst.data());
  CHECK(dst == std::vector<float>{1, 4, 2, 5, 3, 6});
}

// With AVX, float transposes in 8 x 8 register tiles with plain loops at the edges: every size
// around the tile edges, inside a wider buffer (rows ld apart), against the plain definition.
TEST_CASE("transpose_block equals dst[c][r] = src[r][c] at every size around its 8 x 8 tiles") {
  for (int64_t rows : {1, 7, 8, 9, 16, 23, 128})
    for (int64_t cols : {1, 5, 8, 15, 16, 32, 33}) {
      CAPTURE(rows);
      CAPTURE(cols);
      const int64_t ld = cols + 3;
      std::vector<float> src(static_cast<size_t>(rows * ld));
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.5f - 7.0f;
      std::vector<float> dst(static_cast<size_t>(rows * cols), -1.0f), expected(dst.size());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          expected[static_cast<size_t>(c * rows + r)] = src[static_cast<size_t>(r * ld + c)];
      transpose_block(rows, cols, src.data(), ld, dst.data());
      CHECK(dst == expected);
    }
}

// linear's forward transposes W (out, in) in two halves of its rows, each into its own columns of
// one W^T (in, out): the destination's rows are then ldd = out apart, not the block's row count.
TEST_CASE("transpose_block with rows ldd apart in dst: two halves make the whole transpose") {
  for (int64_t out : {1, 9, 24, 65, 384})
    for (int64_t in : {1, 8, 13, 128}) {
      CAPTURE(out);
      CAPTURE(in);
      std::vector<float> w(static_cast<size_t>(out * in));
      for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.25f + 1.0f;
      std::vector<float> whole(w.size(), -1.0f), halves(w.size(), -2.0f);
      transpose_block(out, in, w.data(), in, whole.data());
      const int64_t half = ((out + 1) / 2 + 7) / 8 * 8;
      for (int64_t n0 = 0; n0 < out; n0 += half) {
        const int64_t n1 = std::min(out, n0 + half);
        transpose_block(n1 - n0, in, w.data() + n0 * in, in, halves.data() + n0, out);
      }
      CHECK(halves == whole);
      CHECK(whole[static_cast<size_t>(out - 1)] ==
            w[static_cast<size_t>((out - 1) * in)]);  // (0, out - 1) = W[out - 1][0]
    }
}

// Attention multiplies heads of D <= kSmallHeadMaxD (64 with AVX2 or AVX-512, 32 with 4-float
// vectors) with small_gemm and bigger ones with OpenBLAS: both sides of that cut-over, causal over
// three row blocks of 32 (T = 70), against matmul + masked softmax.
TEST_CASE("attention on both sides of the small_gemm cut-over equals the composed version") {
  const int64_t B = 1, H = 2, T = 70;
  std::vector<double> mask(static_cast<size_t>(T * T));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t s = 0; s < T; ++s) mask[static_cast<size_t>(t * T + s)] = s > t ? 1.0 : 0.0;
  const Tensor causal_mask = Tensor::from_vector(mask, {1, 1, T, T}, DType::f64);
  AttentionOptions opt;
  opt.causal = true;
  for (int64_t D : {kSmallHeadMaxD, kSmallHeadMaxD + 1}) {
    CAPTURE(D);
    Generator gen(21);
    Tensor q = Tensor::randn({B, H, T, D}, gen, 1.0, DType::f64).requires_grad_();
    Tensor k = Tensor::randn({B, H, T, D}, gen, 1.0, DType::f64).requires_grad_();
    Tensor v = Tensor::randn({B, H, T, D}, gen, 1.0, DType::f64).requires_grad_();
    Tensor w = Tensor::randn({B, H, T, D}, gen, 1.0, DType::f64);  // projects the output to a scalar
    Tensor fused = attention(q, k, v, opt);
    sum(fused * w).backward();
    std::vector<Tensor> fused_grads = {q.grad().clone(), k.grad().clone(), v.grad().clone()};
    for (Tensor* x : {&q, &k, &v}) x->set_grad(Tensor());
    Tensor scores = matmul_bt(q, k) * (1.0 / std::sqrt(static_cast<double>(D)));
    Tensor composed = matmul(softmax(masked_fill(scores, causal_mask, -INFINITY), -1), v);
    sum(composed * w).backward();
    std::vector<Tensor> composed_grads = {q.grad(), k.grad(), v.grad()};
    auto max_abs_diff = [](const Tensor& a, const Tensor& b) {
      std::vector<double> x = a.to_vector(), y = b.to_vector();
      REQUIRE(x.size() == y.size());
      double worst = 0;
      for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::fabs(x[i] - y[i]));
      return worst;
    };
    CHECK(max_abs_diff(fused, composed) < 1e-12);  // as the other float64 attention tests
    for (int i = 0; i < 3; ++i) CHECK(max_abs_diff(fused_grads[i], composed_grads[i]) < 1e-12);
  }
}

// Where the CPU has fused multiply-add: x86-64 with FMA or AVX-512, and every ARM64 CPU (the tile
// fuses with NEON's vfmaq there). Without FMA the tile's products round before each add.
#if defined(__FMA__) || defined(__AVX512F__) || defined(__aarch64__)
namespace {

// x as stored in a variable: the compiler may not fuse the product that made it into a later add.
template <class T>
T kept(T x) {
  volatile T v = x;
  return v;
}

// The tile's epilogue rounds alpha * acc in a fixed place (autograd/cpu/small_gemm.cpp, tile):
// fused into the first add in tiles of 3 rows or more, rounded first in tiles of 1 or 2. acc is
// the sum over k in increasing order, each step one fused multiply-add, as the k loop does it.
template <class T>
void check_epilogue_rounding(int64_t R, int64_t N, T alpha, T beta, bool with_bias, std::mt19937& rng) {
  const int64_t K = 32;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> A(static_cast<size_t>(R * K)), B(static_cast<size_t>(K * N)), C(static_cast<size_t>(R * N));
  std::vector<T> bias(static_cast<size_t>(N));
  for (std::vector<T>* v : {&A, &B, &C, &bias})
    for (T& x : *v) x = static_cast<T>(u(rng));
  std::vector<T> got = C;
  small_gemm_in_place(R, N, K, alpha, A.data(), K, int64_t(1), B.data(), N, beta, got.data(), N,
                      with_bias ? bias.data() : nullptr);
  for (int64_t m = 0; m < R; ++m)
    for (int64_t n = 0; n < N; ++n) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k) acc = std::fma(A[size_t(m * K + k)], B[size_t(k * N + n)], acc);
      const T c = C[size_t(m * N + n)], b = bias[size_t(n)];
      T want;
      if (R >= 3) {
        if (beta != T(0)) want = std::fma(alpha, acc, kept(beta * c));
        else want = with_bias ? std::fma(alpha, acc, b) : kept(alpha * acc);
        if (beta != T(0) && with_bias) want = kept(want + b);
      } else {
        want = kept(alpha * acc);
        if (beta != T(0)) want = std::fma(beta, c, want);
        if (with_bias) want = kept(want + b);
      }
      INFO("rows " << R << " N " << N << " alpha " << alpha << " beta " << beta << " bias " << with_bias << " at (" << m
                   << ", " << n << ")");
      CHECK(got[size_t(m * N + n)] == want);
    }
}

}  // namespace

// Which rounding the epilogue uses decides the last bit of attention's dK (alpha = 1/sqrt(D),
// beta = 1) and so of every trained model: pinned here for every tile height and both tile
// widths (a column tail, scalar, is not part of this), float and double.
TEST_CASE("small_gemm's epilogue rounds alpha * acc where the tile height says, bit for bit") {
  std::mt19937 rng(29);
#if defined(__AVX512F__)
  const int64_t tallest = 8;  // kTileRows: up to this many rows are one tile
#else
  const int64_t tallest = 6;
#endif
  for (int64_t R = 1; R <= tallest; ++R)
    for (int64_t vectors : {1, 2})
      for (double beta : {0.0, 1.0, 0.3})
        for (bool with_bias : {false, true}) {
          check_epilogue_rounding<float>(R, vectors * int64_t(xsimd::batch<float>::size), 0.17f, float(beta), with_bias,
                                         rng);
          check_epilogue_rounding<double>(R, vectors * int64_t(xsimd::batch<double>::size), 0.17, beta, with_bias, rng);
        }
}
#endif
