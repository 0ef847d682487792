// small_gemm.cpp: the direct small matrix product (see small_gemm.h) and its plain reference.
//
// C is computed in tiles of R rows x NV vectors (R <= 6, NV <= 2). A tile's R * NV accumulators
// stay in registers for the whole k loop: per k it loads NV vectors of B's row k, broadcasts the R
// values op(A)(m, k) and does R * NV fused multiply-adds. Columns left over after the full vectors
// (N not a multiple of the vector width) take a scalar loop. Every element of C is one sum over k
// in increasing order, so the result depends on the shape only (never on threads or alignment).
#include "autograd/cpu/small_gemm.h"

#include <algorithm>

#include <xsimd/xsimd.hpp>

namespace sf::kernels {

namespace {

// Rows per tile: 6 rows x 2 vectors = 12 accumulators, plus 2 vectors of B and one broadcast, fill
// 15 of the 16 AVX2 registers; 12 independent FMA chains cover the FMA latency of both pipes.
constexpr int kTileRows = 6;

// One tile: C[0..R) x [0..NV * W) from K steps.
template <int R, int NV, class T>
inline void tile(int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb, T beta, T* C,
                 int64_t ldc) {
  using V = xsimd::batch<T>;
  constexpr int64_t W = V::size;
  V acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = V(T(0));
  for (int64_t k = 0; k < K; ++k) {
    const T* b = B + k * ldb;
    const T* a = A + k * csa;
    V bk[NV];
    for (int v = 0; v < NV; ++v) bk[v] = V::load_unaligned(b + v * W);
    for (int r = 0; r < R; ++r) {
      const V ar(a[r * rsa]);
      for (int v = 0; v < NV; ++v) acc[r][v] = xsimd::fma(ar, bk[v], acc[r][v]);
    }
  }
  const V va(alpha), vb(beta);
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) {
      T* c = C + r * ldc + v * W;
      V out = va * acc[r][v];
      if (beta != T(0)) out = xsimd::fma(vb, V::load_unaligned(c), out);
      out.store_unaligned(c);
    }
}

// The same for one column j, scalar (the ragged tail of N).
template <int R, class T>
inline void tile_column(int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb, T beta, T* C,
                        int64_t ldc) {
  T acc[R] = {};
  for (int64_t k = 0; k < K; ++k) {
    const T bk = B[k * ldb];
    for (int r = 0; r < R; ++r) acc[r] += A[r * rsa + k * csa] * bk;
  }
  for (int r = 0; r < R; ++r) {
    T& c = C[r * ldc];
    c = beta != T(0) ? alpha * acc[r] + beta * c : alpha * acc[r];
  }
}

// All of C's columns for R rows.
template <int R, class T>
void row_panel(int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb, T beta,
               T* C, int64_t ldc) {
  constexpr int64_t W = xsimd::batch<T>::size;
  int64_t j = 0;
  for (; j + 2 * W <= N; j += 2 * W) tile<R, 2>(K, alpha, A, rsa, csa, B + j, ldb, beta, C + j, ldc);
  for (; j + W <= N; j += W) tile<R, 1>(K, alpha, A, rsa, csa, B + j, ldb, beta, C + j, ldc);
  for (; j < N; ++j) tile_column<R>(K, alpha, A, rsa, csa, B + j, ldb, beta, C + j, ldc);
}

}  // namespace

template <class T>
void small_gemm(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb,
                T beta, T* C, int64_t ldc) {
  int64_t m = 0;
  for (; m + kTileRows <= M; m += kTileRows)
    row_panel<kTileRows>(N, K, alpha, A + m * rsa, rsa, csa, B, ldb, beta, C + m * ldc, ldc);
  const T* a = A + m * rsa;
  T* c = C + m * ldc;
  switch (M - m) {  // 0 to kTileRows - 1 rows left
    case 5: row_panel<5>(N, K, alpha, a, rsa, csa, B, ldb, beta, c, ldc); break;
    case 4: row_panel<4>(N, K, alpha, a, rsa, csa, B, ldb, beta, c, ldc); break;
    case 3: row_panel<3>(N, K, alpha, a, rsa, csa, B, ldb, beta, c, ldc); break;
    case 2: row_panel<2>(N, K, alpha, a, rsa, csa, B, ldb, beta, c, ldc); break;
    case 1: row_panel<1>(N, K, alpha, a, rsa, csa, B, ldb, beta, c, ldc); break;
    default: break;
  }
}

template <class T>
void small_gemm_reference(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                          int64_t ldb, T beta, T* C, int64_t ldc) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      T sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += A[m * rsa + k * csa] * B[k * ldb + n];
      T& c = C[m * ldc + n];
      c = beta != T(0) ? alpha * sum + beta * c : alpha * sum;
    }
}

// In strips of 8 source rows, so the writes are runs of 8 and the 8 rows read stay in L1.
template <class T>
void transpose_block(int64_t rows, int64_t cols, const T* src, int64_t ld, T* dst) {
  int64_t r0 = 0;
  for (; r0 + 8 <= rows; r0 += 8)  // full strips: a fixed trip count the compiler unrolls
    for (int64_t c = 0; c < cols; ++c) {
      const T* s = src + r0 * ld + c;
      T* d = dst + c * rows + r0;
      for (int64_t r = 0; r < 8; ++r) d[r] = s[r * ld];
    }
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = r0; r < rows; ++r) dst[c * rows + r] = src[r * ld + c];
}

#define SF_SMALL_GEMM(T)                                                                                             \
  template void small_gemm<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t, T, T*,    \
                              int64_t);                                                                              \
  template void small_gemm_reference<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t, \
                                        T, T*, int64_t);                                                             \
  template void transpose_block<T>(int64_t, int64_t, const T*, int64_t, T*);
SF_SMALL_GEMM(float)
SF_SMALL_GEMM(double)
#undef SF_SMALL_GEMM

}  // namespace sf::kernels
