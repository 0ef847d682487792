// head_gemm.h: the matrix products of one attention head, shared by the stored-probabilities
// kernel (ops_attention.cpp) and the tiled one (attention_tiles.cpp). Not part of the public API.
//
// A head's (T, D) rows are `ld` elements apart: D inside a (B, H, T, D) tensor, 3C inside the
// (B, T, 3C) output of a fused QKV projection. Small heads (D <= kSmallHeadMaxD) multiply with the
// direct kernel of small_gemm.h instead of OpenBLAS, whose packing and call overhead cost as much
// as the arithmetic on a 32x16 head. That kernel takes B untransposed, so for Q K^T and dO V^T each
// head's K or V is first transposed once into a (D, S) scratch. Always in place, never packed:
// a row block would pack the whole K^T or V again for its 32 rows (at T = 3000, D = 64 the
// forward ran 3.5% slower packed).
#pragma once
#include <cstdint>

#include "autograd/cpu/blas.h"
#include "autograd/cpu/small_gemm.h"
#include "autograd/quiet_xsimd.h"

namespace sf::kernels {

// Where the (T, D) matrix of head (b, h) lives: at offset b * sb + h * sh, rows ld apart.
struct HeadLayout {
  int64_t sb, sh, ld;
  int64_t at(int64_t b, int64_t h) const { return b * sb + h * sh; }
};
inline HeadLayout bhtd_layout(int64_t H, int64_t T, int64_t D) { return {H * T * D, T * D, D}; }
inline HeadLayout packed_layout(int64_t T, int64_t width, int64_t D) { return {T * width, D, width}; }

// Heads of size D <= this multiply with small_gemm, larger ones with OpenBLAS: D <= 64 when the
// kernel's vectors hold 8 floats or more (AVX2, AVX-512), D <= 32 with 4-float vectors (SSE,
// NEON). Measured in bench/README.md, "How the speed is won".
constexpr int64_t kSmallHeadMaxD = xsimd::batch<float>::size >= 8 ? 64 : 32;
inline bool use_small_gemm(int64_t D) { return D <= kSmallHeadMaxD; }

// C (M, N) = alpha op(A) B + beta C, op(A) = A^T when ta; on small_gemm when small, else BLAS.
template <class Tp>
void head_gemm(bool small, bool ta, int64_t M, int64_t N, int64_t K, Tp alpha, const Tp* A, int64_t lda, const Tp* B,
               int64_t ldb, Tp beta, Tp* C, int64_t ldc) {
  if (small) small_gemm_in_place(M, N, K, alpha, A, ta ? 1 : lda, ta ? lda : 1, B, ldb, beta, C, ldc);
  else blas::gemm(ta, false, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// C (M, N) = alpha A B^T + beta C with B (N, K); small_gemm reads Bt = B^T, (K, N) with rows ldbt apart.
template <class Tp>
void head_gemm_bt(bool small, int64_t M, int64_t N, int64_t K, Tp alpha, const Tp* A, int64_t lda, const Tp* B,
                  int64_t ldb, const Tp* Bt, int64_t ldbt, Tp beta, Tp* C, int64_t ldc) {
  if (small) small_gemm_in_place(M, N, K, alpha, A, lda, int64_t(1), Bt, ldbt, beta, C, ldc);
  else blas::gemm(false, true, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace sf::kernels
