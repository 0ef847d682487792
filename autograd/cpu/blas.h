// blas.h: matrix products on OpenBLAS (not part of the public API).
//
// Row-major C (M, N) = alpha op(A) op(B) + beta C, op = transpose when the flag is set; a transpose
// is a BLAS flag, never a copy. Leading dimensions are explicit so a kernel can multiply blocks
// that sit inside a bigger buffer (attention reads each head straight out of the (B, T, 3C) qkv).
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include "autograd/cpu/threads.h"

namespace sf::blas {

// One call into BLAS on the calling thread.
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
          int64_t ldb, float beta, float* C, int64_t ldc);
void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
          const double* B, int64_t ldb, double beta, double* C, int64_t ldc);

// How gemm_parallel cuts C (M, N): `count` blocks of `size` rows (by_rows) or columns, the last
// one possibly shorter. Fixed by the shape, never by the thread count (see blas.cpp).
struct GemmBlocks {
  bool by_rows;
  int64_t size, count;
};
GemmBlocks gemm_blocks(int64_t M, int64_t N, int64_t K);

// How many consecutive slices of K gemm_parallel cuts a long sum into a small C (M x N, a weight
// gradient) instead of cutting C: 1 (no cut) or an even count of 2 to 8. Fixed by the shape.
int64_t gemm_k_chunks(int64_t M, int64_t N, int64_t K);

// Runs f(m0, m1, n0, n1) for each block [m0, m1) x [n0, n1) of gemm_blocks(M, N, K), the blocks
// split over the thread pool (one block runs inline). A fused op multiplies its block there and
// works on it while it is still in cache: linear's bias before the product, GELU after it.
template <class F>
void for_each_gemm_block(int64_t M, int64_t N, int64_t K, F&& f) {
  const GemmBlocks g = gemm_blocks(M, N, K);
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t lo = b * g.size, hi = std::min((b + 1) * g.size, g.by_rows ? M : N);
      if (g.by_rows) f(lo, hi, int64_t(0), N);
      else f(int64_t(0), M, lo, hi);
    }
  };
  if (g.count == 1) run(0, 1);
  else parallel_for(g.count, 1, run);
}

// The same product split over the thread pool (threads.h): along K into gemm_k_chunks slices when
// that is more than one, else into the blocks of gemm_blocks: C's rows, or its columns when that
// cuts more evenly; small products (under about a megaflop) run as one call. The result has the
// same bits for any number of threads.
template <class T>
void gemm_parallel(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                   int64_t ldb, T beta, T* C, int64_t ldc);

// Dense operands (leading dimension = row length), alpha = 1: the common case.
template <class T>
void gemm_dense(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, const T* B, T beta, T* C) {
  gemm_parallel<T>(ta, tb, M, N, K, T(1), A, ta ? M : K, B, tb ? K : N, beta, C, N);
}

// ---- which kernels OpenBLAS runs ----
// Debian's OpenBLAS (0.3.21, built with DYNAMIC_ARCH) picks its kernels for the CPU when it loads.
// A CPU newer than the library gets its generic SSE3 kernels, "Prescott": on an Emerald Rapids
// Xeon (model 207, which 0.3.21 does not know) that made every step about 3x slower. The kernels
// can be named instead with OPENBLAS_CORETYPE, read once as the library loads.

// The kernel family OpenBLAS chose ("Haswell", "SkylakeX", "Prescott", ...).
std::string core_name();
// Whether a family's kernels use AVX-512: "SkylakeX", "Cooperlake", "SapphireRapids" (0.3.21's).
bool avx512_family(const std::string& chosen);
// The OPENBLAS_CORETYPE to ask for, or "" to keep OpenBLAS's choice: only when it fell back to
// "Prescott" and the CPU has better: AVX-512 (F, BW, DQ, VL) -> "SkylakeX", AVX2 + FMA ->
// "Haswell". Never when the user set OPENBLAS_CORETYPE.
std::string core_override(const std::string& chosen, bool avx512, bool avx2_fma, bool user_set);
// A one-line note when the user's OPENBLAS_CORETYPE holds OpenBLAS to kernels narrower than the
// CPU runs: AVX2 (or older) families on a CPU with AVX-512 (F, BW, DQ, VL). "" otherwise. In an
// AVX-512 build the training step's linear layers run on small_gemm whatever OpenBLAS runs, and the
// note says so; it holds for every product left on OpenBLAS (few rows, as in generation; weights
// over 2^22 elements). The first form decides from its arguments (`user_value`: the variable, or
// nullptr when unset); the second asks this process and CPU.
std::string narrow_kernels_note(const std::string& chosen, const char* user_value, bool avx512);
std::string narrow_kernels_note();
// Whether this CPU runs AVX-512 F, BW, DQ and VL (the families of avx512_family need all four).
bool cpu_has_avx512();

}  // namespace sf::blas
