// blas.cpp: the gemm wrappers of blas.h.
#include "autograd/cpu/blas.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "autograd/cpu/scratch.h"
#include "autograd/cpu/threads.h"

namespace sf::blas {

static CBLAS_TRANSPOSE flag(bool t) { return t ? CblasTrans : CblasNoTrans; }
static int ld(int64_t v) { return std::max(1, static_cast<int>(v)); }  // BLAS wants >= 1

// beta 0 means C = alpha op(A) op(B). OpenBLAS then clears C with its beta kernel before adding
// the product, which profiles at 7% of a small training step; clearing the rows ourselves (a
// memset each) and passing beta 1 does the same arithmetic (0 + the product) at memset speed.
template <class T>
static void clear_if_beta_zero(T& beta, int64_t M, int64_t N, T* C, int64_t ldc) {
  if (beta != T(0)) return;
  if (ldc == N) std::fill_n(C, M * N, T(0));  // contiguous rows: one memset
  else
    for (int64_t m = 0; m < M; ++m) std::fill_n(C + m * ldc, N, T(0));
  beta = T(1);
}

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, const float* B,
          int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  clear_if_beta_zero(beta, M, N, C, ldc);
  cblas_sgemm(CblasRowMajor, flag(ta), flag(tb), int(M), int(N), int(K), alpha, A, ld(lda), B, ld(ldb), beta, C,
              ld(ldc));
}

void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
          const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  clear_if_beta_zero(beta, M, N, C, ldc);
  cblas_dgemm(CblasRowMajor, flag(ta), flag(tb), int(M), int(N), int(K), alpha, A, ld(lda), B, ld(ldb), beta, C,
              ld(ldc));
}

// How a gemm is cut: into blocks of C's rows (or columns) whose size depends only on the shape,
// never on the thread count. OpenBLAS may round an element differently depending on the size of
// the call it sits in, so a split that followed the thread count would make the last bits of a
// training run depend on SF_NUM_THREADS; with fixed blocks one thread runs the same calls as two.
//
// Up to 8 blocks of at least 64 (each block call packs the other operand again, so blocks stay
// large), 2 blocks of 32 when the extent is under 128 (a 64 x 64 weight gradient would otherwise
// run on one thread), and an even count, so two threads get the same share (3 blocks on 2 threads
// leave one idle a third of the time).
static GemmBlocks plan(bool by_rows, int64_t extent) {
  constexpr int64_t kMaxBlocks = 8, kMinBlock = 64, kSmallBlock = 32, kAlign = 16;
  int64_t blocks = std::clamp<int64_t>(extent / kMinBlock, 1, kMaxBlocks);
  if (blocks == 1) blocks = std::clamp<int64_t>(extent / kSmallBlock, 1, 2);
  for (;; --blocks) {  // sizes rounded up to a multiple of 16 may leave fewer blocks: keep the count even
    const int64_t size = ((extent + blocks - 1) / blocks + kAlign - 1) / kAlign * kAlign;
    const int64_t count = (extent + size - 1) / size;
    if (count % 2 == 0 || count == 1) return {by_rows, size, count};
  }
}

GemmBlocks gemm_blocks(int64_t M, int64_t N, int64_t K) {
  constexpr double kMinFlops = 1 << 20;  // below this a split costs more than it saves
  if (2.0 * double(M) * double(N) * double(K) < kMinFlops) return {true, std::max<int64_t>(M, 1), 1};
  const GemmBlocks rows = plan(true, M), cols = plan(false, N);
  // More blocks first; then the cut that pads its last block less (65 rows cut as 48 + 17 lose
  // to 64 columns cut as 32 + 32); then rows when there are at least as many rows.
  if (rows.count != cols.count) return rows.count > cols.count ? rows : cols;
  const int64_t pad_rows = rows.count * rows.size - M, pad_cols = cols.count * cols.size - N;
  if (pad_rows != pad_cols) return pad_rows < pad_cols ? rows : cols;
  return M >= N ? rows : cols;
}

// A long sum into a small C (a weight gradient: dW (out, in) = dY^T X sums over every row of the
// batch) is cut along K. Cut by rows instead, each of the blocks packs all of the other operand
// again (six copies of a 1 MB X for small's qkv); cut along K, each chunk packs only its own rows
// of both (about 1.25x faster for small's qkv weight gradient).
int64_t gemm_k_chunks(int64_t M, int64_t N, int64_t K) {
  constexpr int64_t kMinSlice = 512, kMaxChunks = 8, kMaxC = int64_t(1) << 20;  // C up to 4 MB in float
  if (K < 2 * kMinSlice || K < std::max(M, N) || M * N > kMaxC) return 1;
  const int64_t chunks = std::clamp<int64_t>(K / (2 * kMinSlice), 2, kMaxChunks);  // one per 1024 rows of K
  return chunks - chunks % 2;  // an even count: two threads get the same share
}

// C = alpha op(A) op(B) + beta C as the sum of `chunks` products over consecutive slices of K:
// the first adds into C (with beta), the others go to scratch and are added to C in chunk order,
// element by element. The slices depend only on the shape, so any thread count gives the same bits.
template <class T>
static void gemm_split_k(int64_t chunks, bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                         int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  thread_local std::vector<T> scratch;  // (chunks - 1) dense M x N partial products, kept between calls
  T* partials = kernels::scratch_of(scratch, static_cast<size_t>((chunks - 1) * M * N));
  const int64_t slice = (K + chunks - 1) / chunks;
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t k0 = c * slice, k = std::min(K, k0 + slice) - k0;
      // Slice k0.. of K: rows of A when ta (A is K x M), its columns otherwise; B the other way.
      const T* a = ta ? A + k0 * lda : A + k0;
      const T* b = tb ? B + k0 : B + k0 * ldb;
      if (c == 0) gemm(ta, tb, M, N, k, alpha, a, lda, b, ldb, beta, C, ldc);
      else gemm(ta, tb, M, N, k, alpha, a, lda, b, ldb, T(0), partials + (c - 1) * M * N, N);
    }
  });
  parallel_for(M, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(N, 1)), [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {  // a row of C takes every chunk's part while it is in cache
      T* row = C + m * ldc;
      for (int64_t c = 1; c < chunks; ++c) {
        const T* p = partials + (c - 1) * M * N + m * N;
        for (int64_t n = 0; n < N; ++n) row[n] += p[n];
      }
    }
  });
}

template <class T>
void gemm_parallel(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                   int64_t ldb, T beta, T* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (const int64_t chunks = gemm_k_chunks(M, N, K); chunks > 1) {
    gemm_split_k(chunks, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  // Rows m of op(A) start at A + m*lda (column m when transposed); columns n of op(B) at B + n
  // (row n when transposed).
  for_each_gemm_block(M, N, K, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const T* a = ta ? A + m0 : A + m0 * lda;
    const T* b = tb ? B + n0 * ldb : B + n0;
    gemm(ta, tb, m1 - m0, n1 - n0, K, alpha, a, lda, b, ldb, beta, C + m0 * ldc + n0, ldc);
  });
}

template void gemm_parallel<float>(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*,
                                   int64_t, float, float*, int64_t);
template void gemm_parallel<double>(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                                    const double*, int64_t, double, double*, int64_t);

// ---- which kernels OpenBLAS runs ----

std::string core_name() {
  const char* name = openblas_get_corename();
  return name ? name : "";
}

std::string core_override(const std::string& chosen, bool avx512, bool avx2_fma, bool user_set) {
  if (user_set || chosen != "Prescott") return "";
  if (avx512) return "SkylakeX";
  if (avx2_fma) return "Haswell";
  return "";
}

bool avx512_family(const std::string& chosen) {
  for (const char* wide : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (chosen == wide) return true;
  return false;
}

std::string narrow_kernels_note(const std::string& chosen, const char* user_value, bool avx512) {
  if (!user_value || !avx512 || avx512_family(chosen)) return "";
#if defined(__AVX512F__)  // this build's small_gemm tiles are AVX-512 (ops_matmul.cpp: direct_linear)
  const char* gain =
      "up to about 2x faster on the products OpenBLAS computes, as in generation; training's linear layers "
      "run on scratchformer's own AVX-512 kernel either way, at batches of 512 tokens or more";
#else
  const char* gain = "up to about 2x faster products";
#endif
  return "OPENBLAS_CORETYPE=" + std::string(user_value) + " holds OpenBLAS to " + chosen +
         " kernels (no AVX-512) on this AVX-512 CPU; unset it to let OpenBLAS choose (" + gain + ")";
}

bool cpu_has_avx512() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
  return false;
#endif
}

std::string narrow_kernels_note() {
  return narrow_kernels_note(core_name(), std::getenv("OPENBLAS_CORETYPE"), cpu_has_avx512());
}

}  // namespace sf::blas
