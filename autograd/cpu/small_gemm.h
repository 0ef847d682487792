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

#include "autograd/quiet_xsimd.h"

namespace sf::kernels {

// C = alpha op(A) B + beta C (+ bias), register-tiled with xsimd (6 rows x 2 vectors of C at a time,
// 8 rows with AVX-512). bias, when given, holds N values added to every row of C as the tile is
// stored (a linear layer's bias, so y never takes a separate pass for it).
template <class T>
void small_gemm(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb,
                T beta, T* C, int64_t ldc, const T* bias = nullptr);

// small_gemm's two ways, public for the tests (the same bits on every shape). In place reads B
// where it lies. Packed copies B block by block into panels as wide as the widest tile, each block
// about kPackedBlockBytes: a large B read in place is re-read from L3 for every few rows of C with
// its rows ldb apart; packed, a block stays in L2 and each panel's rows are contiguous. small_gemm
// packs when B is over kPackedBlockBytes and C has at least two tiles of rows. On a 2-core Zen 5,
// one thread, M = 1024, GFLOP/s in place / packed / OpenBLAS's AVX-512 kernels / its AVX2 ones:
// K 384 x N 1536 117-129 / 190-215 / 187-202 / 106; K 1536 x N 384 136-153 / 198-216 / 190-197 /
// 105 (blocks of 2^18 bytes: packed 176-188 on the first; 2^20: 176 and 164 at M = 256).
constexpr int64_t kPackedBlockBytes = int64_t(1) << 19;
// Whether a (K, N) B is large enough to be packed: over one block.
template <class T>
constexpr bool packs_b(int64_t K, int64_t N) {
  return K * N * int64_t(sizeof(T)) > kPackedBlockBytes;
}
template <class T>
void small_gemm_in_place(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                         int64_t ldb, T beta, T* C, int64_t ldc, const T* bias = nullptr);
template <class T>
void small_gemm_packed(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                       int64_t ldb, T beta, T* C, int64_t ldc, const T* bias = nullptr);

// Packed as small_gemm_packed, and op(A) too: each row panel's rows of op(A) copied into a
// contiguous strip first (for A^T read down its columns: a weight gradient's dy^T). Same bits.
// Defined only in builds whose tiles are narrower than AVX-512 (the AVX2 build's linear dW).
template <class T>
void small_gemm_packed_a(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                         int64_t ldb, T beta, T* C, int64_t ldc, const T* bias = nullptr);

// B packed once for many products (a linear layer's W^T, made straight in this layout, or W for
// the backward's dx over all of dy's row panels): panel p holds columns [p P, p P + w) of B as a
// (K, w) matrix with rows w apart, w = min(P, N - p P), the panels one after the other, so column
// j's panel starts at panels + j K. pack_panels writes columns [n0, n1) of a row-major B (n0 a
// multiple of P) starting at `panels`; small_gemm_prepacked multiplies with all N columns of such
// a B, block by block as small_gemm_packed, with the same bits.
template <class T>
constexpr int64_t kPanelWidth = 2 * int64_t(xsimd::batch<T>::size);  // the widest tile
template <class T>
void pack_panels(int64_t K, int64_t n0, int64_t n1, const T* B, int64_t ldb, T* panels);
template <class T>
void small_gemm_prepacked(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa,
                          const T* panels, T beta, T* C, int64_t ldc, const T* bias = nullptr);

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
