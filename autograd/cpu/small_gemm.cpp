// small_gemm.cpp: the direct small matrix product (see small_gemm.h) and its plain reference.
//
// C is computed in tiles of R rows x NV vectors (R <= kTileRows, NV <= 2). A tile's R * NV accumulators
// stay in registers for the whole k loop: per k it loads NV vectors of B's row k, broadcasts the R
// values op(A)(m, k) and does R * NV fused multiply-adds. Columns left over after the full vectors
// (N not a multiple of the vector width) take a scalar loop. Every element of C is one sum over k
// in increasing order, so the result depends on the shape only (never on threads or alignment).
#include "autograd/cpu/small_gemm.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX__)
#include <immintrin.h>
#endif

#include "autograd/cpu/scratch.h"
#include "autograd/quiet_xsimd.h"

namespace sf::kernels {

namespace {

// Rows per tile: 6 rows x 2 vectors = 12 accumulators, plus 2 vectors of B and one broadcast, fill
// 15 of the 16 AVX2 registers; 12 independent FMA chains cover the FMA latency of both pipes.
// AVX-512 has 32 registers: 8 rows x 2 vectors = 16 accumulators (19 registers in all).
#if defined(__AVX512F__)
constexpr int kTileRows = 8;
#else
constexpr int kTileRows = 6;
#endif

// x, rounded where it stands: the compiler may not fuse the product that made x into a later add
// (an empty asm the value passes through, which it cannot see into). GCC fuses a * b + c in C++
// wherever the CPU has the instruction: x86-64 with FMA, and every ARM64 CPU. "v" names an
// SSE/AVX register, "w" an ARM64 SIMD register.
template <class V>
inline V rounded(V x) {
#if defined(__GNUC__) && defined(__x86_64__)
  asm("" : "+v"(x.data));
#elif defined(__GNUC__) && defined(__aarch64__)
  asm("" : "+w"(x.data));
#endif
  return x;
}

// a * b + c with one rounding, always. xsimd 8's fma for AVX-512 is written a * b + c, which the
// compiler fuses or not as it sees fit: a Release build fused the k loop's, the ASan build
// (-O2 with sanitizers) did not, so the two builds' products differed in the last bit.
#if defined(__AVX512F__)
inline __m512 fused(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
inline __m512d fused(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
#endif
#if defined(__FMA__)
inline __m256 fused(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
inline __m256d fused(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
#endif
// Elsewhere xsimd's fma: one instruction on ARM64 (NEON's vfmaq), the unfused a * b + c without FMA.
template <class V>
inline V fused(V a, V b, V c) {
#if defined(__FMA__) || defined(__AVX512F__)
  return V(fused(a.data, b.data, c.data));
#else
  return xsimd::fma(a, b, c);
#endif
}

// One tile: C[0..R) x [0..NV * W) from K steps.
//
// The loops over the tile's rows and vectors are unrolled whole (the pragmas), so the R * NV
// accumulators live in registers from the first k to the store. Left to itself GCC unrolled the k
// loop's body only and kept the accumulators as an array on the stack: zeroed there, loaded before
// the loop, stored after it for the epilogue to read, 48 extra memory operations a tile, felt most
// at K = 32 (attention's products).
//
// The epilogue rounds as the former one compiled to on an AVX-512 build: with alpha != 1 and beta
// != 0 (or a bias), where alpha * acc is rounded was GCC's own choice (in a * b + c * d it may fuse
// either product), and it had fused alpha * acc into the add in tiles of 3 rows or more and kept it
// apart in tiles of 1 or 2. Both are written out below, so every result keeps its bits (a probe of
// 204,120 calls, every tile height, alpha, beta, bias, float and double, compared old and new). With
// alpha = 1, as in every linear layer, the two are the same.
template <int R, int NV, class T>
inline void tile(int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb, T beta, T* C,
                 int64_t ldc, const T* bias) {
  using V = xsimd::batch<T>;
  constexpr int64_t W = V::size;
  V acc[R][NV];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = V(T(0));
  for (int64_t k = 0; k < K; ++k) {
    const T* b = B + k * ldb;
    const T* a = A + k * csa;
    V bk[NV];
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) bk[v] = V::load_unaligned(b + v * W);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const V ar(a[r * rsa]);
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) acc[r][v] = fused(ar, bk[v], acc[r][v]);
    }
  }
  const V va(alpha), vb(beta);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) {
      T* c = C + r * ldc + v * W;
      V out;
      if constexpr (R >= 3) {  // alpha * acc fused into the first add
        if (beta != T(0)) {
          out = fused(va, acc[r][v], rounded(vb * V::load_unaligned(c)));
          if (bias) out += V::load_unaligned(bias + v * W);
        } else {
          out = bias ? fused(va, acc[r][v], V::load_unaligned(bias + v * W)) : va * acc[r][v];
        }
      } else {  // alpha * acc rounded first
        out = rounded(va * acc[r][v]);
        if (beta != T(0)) out = fused(vb, V::load_unaligned(c), out);
        if (bias) out += V::load_unaligned(bias + v * W);
      }
      out.store_unaligned(c);
    }
}

// The same for one column j, scalar (the ragged tail of N).
template <int R, class T>
inline void tile_column(int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb, T beta, T* C,
                        int64_t ldc, const T* bias) {
  T acc[R] = {};
  for (int64_t k = 0; k < K; ++k) {
    const T bk = B[k * ldb];
    for (int r = 0; r < R; ++r) acc[r] += A[r * rsa + k * csa] * bk;
  }
  for (int r = 0; r < R; ++r) {
    T& c = C[r * ldc];
    c = beta != T(0) ? alpha * acc[r] + beta * c : alpha * acc[r];
    if (bias) c += *bias;
  }
}

// Asks for the cache lines of a tile of R rows x 2 vectors of C (rows ldc apart) with the intent
// to write them (PREFETCHW where the CPU has it), so that the tile's stores, a whole K loop later,
// find them in cache. Without it every tile of a C that is not in cache (a fresh activation, a
// block of attention scores) ends on stores that wait for its lines to come from L3 or memory.
template <int R, class T>
inline void prefetch_tile_for_write(const T* c, int64_t ldc) {
  constexpr int64_t W = xsimd::batch<T>::size, kLine = 64 / int64_t(sizeof(T));
  for (int r = 0; r < R; ++r)
    for (int64_t e = 0; e < 2 * W; e += kLine) __builtin_prefetch(c + r * ldc + e, 1, 3);
}

// All of C's columns for R rows. Each wide tile first prefetches the next one's lines of C: the
// next tile of these rows, and after the last one `next_c`, the tile the caller does next
// (kTileRows rows x 2 vectors, or nullptr).
template <int R, class T>
void row_panel(int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb, T beta,
               T* C, int64_t ldc, const T* bias, const T* next_c = nullptr) {
  constexpr int64_t W = xsimd::batch<T>::size;
  auto at = [bias](int64_t j) { return bias ? bias + j : nullptr; };
  int64_t j = 0;
  for (; j + 2 * W <= N; j += 2 * W) {
    if (j + 4 * W <= N) prefetch_tile_for_write<R>(C + j + 2 * W, ldc);
    else if (next_c) prefetch_tile_for_write<kTileRows>(next_c, ldc);
    tile<R, 2>(K, alpha, A, rsa, csa, B + j, ldb, beta, C + j, ldc, at(j));
  }
  for (; j + W <= N; j += W) tile<R, 1>(K, alpha, A, rsa, csa, B + j, ldb, beta, C + j, ldc, at(j));
  for (; j < N; ++j) tile_column<R>(K, alpha, A, rsa, csa, B + j, ldb, beta, C + j, ldc, at(j));
}

// Calls panel(std::integral_constant<int, R>{}, m) for the panels of R rows that cover [0, M):
// kTileRows rows each, then one panel of the 0 to kTileRows - 1 rows left.
//
// With 6-row tiles, 1 to 3 rows left are instead taken together with the last whole panel's 6
// and cut as 4 + 3, 4 + 4 or 5 + 4 rows. A tile of R rows keeps 2R chains of multiply-adds going,
// and two FMA pipes with a latency of 4 cycles need 8 to stay busy: a panel of 1 or 2 rows runs
// at a quarter or half of the speed (the 2 rows left when 128 or 512 rows meet 6-row tiles).
// Each element of C is still one sum over k in order; only the epilogue's rounding with alpha
// != 1 and beta != 0 differs between tiles of fewer than 3 rows and the others (see tile).
template <class Panel>
void for_row_panels(int64_t M, Panel panel) {
  int64_t m = 0;
#if !defined(__AVX512F__)
  static_assert(kTileRows == 6);
  if (const int64_t left = M % 6; M > 6 && left >= 1 && left <= 3) {
    for (; m + 12 <= M; m += 6) panel(std::integral_constant<int, 6>{}, m);
    switch (left) {
      case 1: panel(std::integral_constant<int, 4>{}, m), panel(std::integral_constant<int, 3>{}, m + 4); break;
      case 2: panel(std::integral_constant<int, 4>{}, m), panel(std::integral_constant<int, 4>{}, m + 4); break;
      default: panel(std::integral_constant<int, 5>{}, m), panel(std::integral_constant<int, 4>{}, m + 5); break;
    }
    return;
  }
#endif
  for (; m + kTileRows <= M; m += kTileRows) panel(std::integral_constant<int, kTileRows>{}, m);
  switch (M - m) {
    case 7: panel(std::integral_constant<int, 7>{}, m); break;
    case 6: panel(std::integral_constant<int, 6>{}, m); break;
    case 5: panel(std::integral_constant<int, 5>{}, m); break;
    case 4: panel(std::integral_constant<int, 4>{}, m); break;
    case 3: panel(std::integral_constant<int, 3>{}, m); break;
    case 2: panel(std::integral_constant<int, 2>{}, m); break;
    case 1: panel(std::integral_constant<int, 1>{}, m); break;
    default: break;
  }
}

}  // namespace

template <class T>
void small_gemm_in_place(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                         int64_t ldb, T beta, T* C, int64_t ldc, const T* bias) {
  for_row_panels(M, [&](auto rows, int64_t m) {
    const int64_t next = m + decltype(rows)::value;  // the next row panel: its first tile, when it is a whole one
    row_panel<decltype(rows)::value>(N, K, alpha, A + m * rsa, rsa, csa, B, ldb, beta, C + m * ldc, ldc, bias,
                                     next + kTileRows <= M ? C + next * ldc : nullptr);
  });
}

namespace {

// Columns per block of packed B: about kPackedBlockBytes, a whole number of panels.
template <class T>
int64_t block_columns(int64_t K) {
  constexpr int64_t P = kPanelWidth<T>;
  return std::max<int64_t>(P, kPackedBlockBytes / std::max<int64_t>(1, K * int64_t(sizeof(T))) / P * P);
}

// Columns [n0, n1) of C (n0 a multiple of P) from their panels, the panel of column j at
// panels + (j - n0) * K: every row panel of C against every panel of the block.
template <class T>
void multiply_block(int64_t M, int64_t n0, int64_t n1, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa,
                    const T* panels, T beta, T* C, int64_t ldc, const T* bias) {
  constexpr int64_t P = kPanelWidth<T>;
  for_row_panels(M, [&](auto rows, int64_t m) {
    constexpr int R = decltype(rows)::value;
    for (int64_t j = n0; j < n1; j += P) {
      const int64_t width = std::min(P, n1 - j);
      // The whole tile done next, if any: this row panel's next one, or the first of the next rows.
      const T* next = j + 2 * P <= n1                          ? C + m * ldc + j + P
                      : m + R + kTileRows <= M && n0 + P <= n1 ? C + (m + R) * ldc + n0
                                                               : nullptr;
      row_panel<R>(width, K, alpha, A + m * rsa, rsa, csa, panels + (j - n0) * K, width, beta, C + m * ldc + j, ldc,
                   bias ? bias + j : nullptr, next);
    }
  });
}

}  // namespace

template <class T>
void pack_panels(int64_t K, int64_t n0, int64_t n1, const T* B, int64_t ldb, T* panels) {
  constexpr int64_t P = kPanelWidth<T>;
  for (int64_t j = n0; j < n1; j += P) {
    const int64_t width = std::min(P, n1 - j);
    T* panel = panels + (j - n0) * K;
    for (int64_t k = 0; k < K; ++k) std::copy(B + k * ldb + j, B + k * ldb + j + width, panel + k * width);
  }
}

// Block by block: B's columns [n0, n1) are copied into panels, then every row panel of C is
// multiplied with them. A panel's k rows lie one after the other (one or two cache lines each)
// instead of ldb apart, and a block stays in the core's L2 cache while all of C's rows pass. Each
// column is still computed by the same tile as in place (a panel narrower than P is only ever the
// last), so the same bits.
template <class T>
void small_gemm_packed(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                       int64_t ldb, T beta, T* C, int64_t ldc, const T* bias) {
  const int64_t per_block = block_columns<T>(K);
  thread_local std::vector<T> panels;  // the calling thread's; kept between calls
  T* packed = scratch_of(panels, static_cast<size_t>(K * std::min(per_block, N)));
  for (int64_t n0 = 0; n0 < N; n0 += per_block) {
    const int64_t n1 = std::min(N, n0 + per_block);
    pack_panels(K, n0, n1, B, ldb, packed);
    multiply_block(M, n0, n1, K, alpha, A, rsa, csa, packed, beta, C, ldc, bias);
  }
}

template <class T>
void small_gemm_prepacked(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa,
                          const T* panels, T beta, T* C, int64_t ldc, const T* bias) {
  const int64_t per_block = block_columns<T>(K);
  for (int64_t n0 = 0; n0 < N; n0 += per_block)
    multiply_block(M, n0, std::min(N, n0 + per_block), K, alpha, A, rsa, csa, panels + n0 * K, beta, C, ldc, bias);
}

// Compiled where the tiles are narrower than AVX-512 only: its callers (linear's weight gradient)
// use it only there, and an AVX-512 build's object code stays as it was without it (inlining
// choices elsewhere in this file could otherwise change, and with them where GCC fuses the scalar
// column tail's multiply-adds).
#if !defined(__AVX512F__)
// Both operands copied: B block by block into panels (as small_gemm_packed), and for each row
// panel of C its R rows of op(A) into a (K, R) strip, k's R values side by side. Read in place, a
// row panel of A^T (a weight gradient's dy^T) is K cache lines ldA apart; with ldA a multiple of
// 512 bytes they fall into a few of the L1 cache's sets, so every tile of the row panel fetches
// them again from L2. Copied, the strip is K * R contiguous values, read by all of the row
// panel's tiles from L1. Each element of C is still the same tile's sum in the same order: the
// same bits as small_gemm.
template <class T>
void small_gemm_packed_a(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                         int64_t ldb, T beta, T* C, int64_t ldc, const T* bias) {
  constexpr int64_t P = kPanelWidth<T>;
  const int64_t whole = N / P * P;  // columns in whole panels; the rest in place, on the same code as small_gemm
  if (whole < N)
    small_gemm_in_place(M, N - whole, K, alpha, A, rsa, csa, B + whole, ldb, beta, C + whole, ldc,
                        bias ? bias + whole : nullptr);
  if (whole == 0) return;
  const int64_t per_block = block_columns<T>(K);
  thread_local std::vector<T> panels, strips;  // the calling thread's; kept between calls
  scratch_of(panels, static_cast<size_t>(K * std::min(per_block, whole)));
  scratch_of(strips, static_cast<size_t>(K * M));
  // op(A)'s rows in strips: the strip of the row panel at m holds its R rows as (K, R) at strips + m K.
  // For A^T (rsa = 1) the copy goes kCopyRows of A's rows at a time, every row panel's values from
  // them in turn: those rows are read from memory once, front to back, and then come from L1 for
  // every row panel, where a row panel at a time would walk all K rows ldA apart for each of them.
  // (Whole rows at a time was slower: the panels' write positions, K P values apart, 16 KiB at
  // K = 256, all fall into one of L1's sets, and the strips' into a few.)
  constexpr int64_t kCopyRows = 16;
  if (rsa == 1) {
    for (int64_t k0 = 0; k0 < K; k0 += kCopyRows) {
      const int64_t k1 = std::min(K, k0 + kCopyRows);
      for_row_panels(M, [&](auto rows, int64_t m) {
        constexpr int R = decltype(rows)::value;
        T* s = strips.data() + m * K;
        for (int64_t k = k0; k < k1; ++k) std::memcpy(s + k * R, A + m + k * csa, sizeof(T) * R);  // a move or two
      });
    }
  } else {
    for_row_panels(M, [&](auto rows, int64_t m) {
      constexpr int R = decltype(rows)::value;
      const T* a = A + m * rsa;
      T* s = strips.data() + m * K;
      for (int64_t k = 0; k < K; ++k)
        for (int r = 0; r < R; ++r) s[k * R + r] = a[k * csa + r * rsa];
    });
  }
  for (int64_t n0 = 0; n0 < whole; n0 += per_block) {
    const int64_t n1 = std::min(whole, n0 + per_block);
    // Whole panels, kCopyRows of B's rows at a time as for the strips: each panel's P values of
    // those rows (a fixed-length copy), the rows read once and then from L1.
    for (int64_t k0 = 0; k0 < K; k0 += kCopyRows)
      for (int64_t j = n0; j < n1; j += P) {
        T* panel = panels.data() + (j - n0) * K;
        for (int64_t k = k0; k < std::min(K, k0 + kCopyRows); ++k)
          for (int64_t e = 0; e < P; ++e) panel[k * P + e] = B[k * ldb + j + e];
      }
    // One panel of B (K x P, in L1) against every strip of op(A) (from L2) in turn.
    for (int64_t j = n0; j < n1; j += P)
      for_row_panels(M, [&](auto rows, int64_t m) {
        constexpr int R = decltype(rows)::value;
        const T* next = m + R + kTileRows <= M ? C + (m + R) * ldc + j : nullptr;
        row_panel<R>(P, K, alpha, strips.data() + m * K, int64_t(1), int64_t(R), panels.data() + (j - n0) * K, P, beta,
                     C + m * ldc + j, ldc, bias ? bias + j : nullptr, next);
      });
  }
}
#endif

template <class T>
void small_gemm(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B, int64_t ldb,
                T beta, T* C, int64_t ldc, const T* bias) {
  if (packs_b<T>(K, N) && M >= 2 * kTileRows)
    small_gemm_packed(M, N, K, alpha, A, rsa, csa, B, ldb, beta, C, ldc, bias);
  else small_gemm_in_place(M, N, K, alpha, A, rsa, csa, B, ldb, beta, C, ldc, bias);
}

template <class T>
void small_gemm_reference(int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t rsa, int64_t csa, const T* B,
                          int64_t ldb, T beta, T* C, int64_t ldc, const T* bias) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      T sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += A[m * rsa + k * csa] * B[k * ldb + n];
      T& c = C[m * ldc + n];
      c = beta != T(0) ? alpha * sum + beta * c : alpha * sum;
      if (bias) c += bias[n];
    }
}

// The plain double loop, for the edges of the tiled version below and for double.
template <class T>
static void transpose_plain(int64_t r0, int64_t r1, int64_t c0, int64_t c1, const T* src, int64_t ld, T* dst,
                            int64_t ldd) {
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t r = r0; r < r1; ++r) dst[c * ldd + r] = src[r * ld + c];
}

#if defined(__AVX__)
// 8 x 8 floats in registers: 8 row loads, three rounds of shuffles (pairs of elements, then pairs
// of pairs, then the 128-bit halves), 8 stores. Attention transposes each head's K and V this way;
// element by element (8 strided loads per output run) it took 8% of attention's time.
static inline void transpose8x8(const float* s, int64_t ld, float* d, int64_t ldd) {
  __m256 r[8], t[8], u[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(s + i * ld);
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // a0 b0 a1 b1 | a4 b4 a5 b5
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3 | a6 b6 a7 b7
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));      // a0 b0 c0 d0 | a4 b4 c4 d4
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));  // a1 b1 c1 d1 | ...
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(d + i * ldd, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));        // column i
    _mm256_storeu_ps(d + (i + 4) * ldd, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));  // column i + 4
  }
}
#endif

// The tiles walk a band of 8 rows left to right, so 8 rows of src are read at once, and each
// 64-byte line of the next band is asked for (a prefetch) while this band is done. A weight
// that comes from memory (a linear layer's W, last written by the optimizer a step ago) would
// otherwise be read at the speed of one line in flight per row (about 3x slower for a weight out
// of memory; out of L3 the prefetch changes nothing).
template <class T>
void transpose_block(int64_t rows, int64_t cols, const T* src, int64_t ld, T* dst, int64_t ldd) {
  int64_t r8 = 0, c8 = 0;  // the part done in 8 x 8 tiles
#if defined(__AVX__)
  if constexpr (std::is_same_v<T, float>) {
    r8 = rows / 8 * 8;
    c8 = cols / 8 * 8;
    for (int64_t r0 = 0; r0 < r8; r0 += 8)
      for (int64_t c0 = 0; c0 < c8; c0 += 8) {
        if (c0 % 16 == 0)  // 16 floats: one cache line of each row of the next band
          for (int64_t r = r0 + 8; r < std::min(r0 + 16, rows); ++r)
            _mm_prefetch(reinterpret_cast<const char*>(src + r * ld + c0), _MM_HINT_T0);
        transpose8x8(src + r0 * ld + c0, ld, dst + c0 * ldd + r0, ldd);
      }
  }
#endif
  transpose_plain<T>(0, r8, c8, cols, src, ld, dst, ldd);    // the columns right of the tiles
  transpose_plain<T>(r8, rows, 0, cols, src, ld, dst, ldd);  // the rows below them (all of it without tiles)
}

#define SF_SMALL_GEMM(T)                                                                                               \
  template void small_gemm<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t, T, T*,      \
                              int64_t, const T*);                                                                      \
  template void small_gemm_in_place<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t, T, \
                                       T*, int64_t, const T*);                                                         \
  template void small_gemm_packed<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t, T,   \
                                     T*, int64_t, const T*);                                                           \
  template void small_gemm_prepacked<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, T, T*,     \
                                        int64_t, const T*);                                                            \
  template void pack_panels<T>(int64_t, int64_t, int64_t, const T*, int64_t, T*);                                      \
  template void small_gemm_reference<T>(int64_t, int64_t, int64_t, T, const T*, int64_t, int64_t, const T*, int64_t,   \
                                        T, T*, int64_t, const T*);                                                     \
  template void transpose_block<T>(int64_t, int64_t, const T*, int64_t, T*, int64_t);
SF_SMALL_GEMM(float)
SF_SMALL_GEMM(double)
#undef SF_SMALL_GEMM
#if !defined(__AVX512F__)
template void small_gemm_packed_a<float>(int64_t, int64_t, int64_t, float, const float*, int64_t, int64_t, const float*,
                                         int64_t, float, float*, int64_t, const float*);
template void small_gemm_packed_a<double>(int64_t, int64_t, int64_t, double, const double*, int64_t, int64_t,
                                          const double*, int64_t, double, double*, int64_t, const double*);
#endif

}  // namespace sf::kernels
