// small_gemm.h: a direct matrix product for the small blocks of attention and the linear layers
// with small weights (not part of the public API).
//
// OpenBLAS packs both operands before it multiplies; for a 32x16 attention head packing and call
// overhead take as long as the arithmetic. This kernel reads the operands where they are instead:
//   C (M, N) = alpha op(A) B + beta C,   op(A)(m, k) = A[m * rsa + k * csa],
// so A (rsa = lda, csa = 1) and A^T (rsa = 1, csa = lda) are both read without a copy. B is
// row-major (K, N) with rows ldb apart, C row-major with rows ldc apart. For a product with B
// transposed, transpose B once into a small scratch (transpose_block) and use the same kernel.
// beta = 0 never reads C (it may hold garbage), as in BLAS.
#pragma once
#include <cstdint>

namespace sf::kernels {

// C = alpha op(A) B + beta C (+ bias), register-tiled with xsimd (6 rows x 2 vectors of C at a time,
// 8 rows with AVX-512). bias, when given, holds N values added to every row of C as the tile is
// stored (a linear layer's bias, so y never takes a separate pass for it).
template <class T>
void small_gemm(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb,
                T beta, T* C, int64_t ldc, const T* bias = nullptr);

// The same product as a plain triple loop: the reference the tests compare small_gemm with.
template <class T>
void small_gemm_reference(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                          int64_t ldb, T beta, T* C, int64_t ldc, const T* bias = nullptr);

// dst (cols, rows) with rows ldd apart = the transpose of src (rows, cols) with rows ld apart. With
// AVX, float goes in 8 x 8 register tiles (a plain loop at the edges); pure data movement, so the
// same values. The five-argument form writes dst dense (ldd = rows).
template <class T>
void transpose_block(int64_t rows, int64_t cols, const T* src, int64_t ld, T* dst, int64_t ldd);
template <class T>
void transpose_block(int64_t rows, int64_t cols, const T* src, int64_t ld, T* dst) {
  transpose_block(rows, cols, src, ld, dst, rows);
}

}  // namespace sf::kernels
