// blas.cpp: the gemm wrappers of blas.h.
#include "autograd/cpu/blas.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

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
static int64_t block_size(int64_t extent) {
  constexpr int64_t kMaxBlocks = 8, kMinBlock = 64, kAlign = 16;
  int64_t blocks = std::clamp<int64_t>(extent / kMinBlock, 1, kMaxBlocks);
  int64_t size = (extent + blocks - 1) / blocks;
  return (size + kAlign - 1) / kAlign * kAlign;
}

template <class T>
void gemm_parallel(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                   int64_t ldb, T beta, T* C, int64_t ldc) {
  constexpr double kMinFlops = 1 << 20;  // below this a split costs more than it saves
  if (2.0 * double(M) * double(N) * double(K) < kMinFlops) {
    gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  if (M >= N) {  // row blocks: rows m of op(A) start at A + m*lda (or column m when transposed)
    const int64_t rows = block_size(M);
    parallel_for((M + rows - 1) / rows, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t m0 = b0 * rows; m0 < std::min(M, b1 * rows); m0 += rows) {
        const T* a = ta ? A + m0 : A + m0 * lda;
        gemm(ta, tb, std::min(rows, M - m0), N, K, alpha, a, lda, B, ldb, beta, C + m0 * ldc, ldc);
      }
    });
  } else {  // column blocks: columns n of op(B) start at B + n (or row n when transposed)
    const int64_t cols = block_size(N);
    parallel_for((N + cols - 1) / cols, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t n0 = b0 * cols; n0 < std::min(N, b1 * cols); n0 += cols) {
        const T* b = tb ? B + n0 * ldb : B + n0;
        gemm(ta, tb, M, std::min(cols, N - n0), K, alpha, A, lda, b, ldb, beta, C + n0, ldc);
      }
    });
  }
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

void reexec_with_better_kernels(char** argv) {
#if defined(__x86_64__)
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  const bool avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const std::string core = core_override(core_name(), avx512, avx2_fma, std::getenv("OPENBLAS_CORETYPE") != nullptr);
  if (core.empty()) return;
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  execv("/proc/self/exe", argv);  // returns only on failure
  unsetenv("OPENBLAS_CORETYPE");  // (children would otherwise get kernels this process does not run)
#else
  (void)argv;
#endif
}

}  // namespace sf::blas
