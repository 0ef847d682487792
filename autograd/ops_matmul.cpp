// ops_matmul.cpp: matrix products on BLAS. float32 -> sgemm, float64 -> dgemm; a transpose is a
// BLAS flag, never a copy. Linear layers with a small weight multiply on the direct kernel of
// autograd/cpu/small_gemm.h instead (see kSmallWeight). Under fp16/bf16 autocast the inputs and
// outputs are rounded to the low-precision grid (accumulation stays float32, as on tensor cores).
#include <algorithm>
#include <atomic>
#include <vector>

#include "autograd/cpu/blas.h"
#include "autograd/graph.h"
#include "autograd/cpu/gelu.h"
#include "autograd/cpu/kernels.h"
#include "autograd/cpu/lowp.h"
#include "autograd/cpu/scratch.h"
#include "autograd/cpu/small_gemm.h"
#include "autograd/ops.h"
#include "autograd/cpu/threads.h"
#include "autograd/quiet_xsimd.h"

namespace sf {

// C (M, N) = op(A) op(B) + beta * C on dense row-major operands, split over the thread pool.
template <class T>
static void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, const T* B, T* C, double beta) {
  blas::gemm_dense<T>(ta, tb, M, N, K, A, B, static_cast<T>(beta), C);
}

// True when two batch shapes broadcast (NumPy rules, right-aligned).
static bool broadcastable(const Shape& a, const Shape& b) {
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    int64_t x = a[a.size() - 1 - k], y = b[b.size() - 1 - k];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

Tensor matmul(const Tensor& a, const Tensor& b, Transposed t) {
  const bool ta = t.a, tb = t.b;
  kernels::check_same_dtype(a, b, "matmul");
  if (a.dim() < 2 || b.dim() < 2)
    throw ShapeError("matmul: both operands need at least 2 dimensions, got " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()));
  int64_t M = ta ? a.size(-1) : a.size(-2), K = ta ? a.size(-2) : a.size(-1);
  int64_t Kb = tb ? b.size(-1) : b.size(-2), N = tb ? b.size(-2) : b.size(-1);
  if (K != Kb)
    throw ShapeError("matmul: inner dimensions differ, " + shape_str(a.shape()) + (ta ? "^T" : "") + " @ " +
                     shape_str(b.shape()) + (tb ? "^T" : "") + " (" + std::to_string(K) + " vs " + std::to_string(Kb) +
                     ")");
  Shape batch_a(a.shape().begin(), a.shape().end() - 2), batch_b(b.shape().begin(), b.shape().end() - 2);
  if (!broadcastable(batch_a, batch_b))
    throw ShapeError("matmul: batch dimensions of " + shape_str(a.shape()) + " and " + shape_str(b.shape()) +
                     " cannot be broadcast together");
  Shape batch = broadcast_shapes(batch_a, batch_b, "matmul");
  Shape out_shape = batch;
  out_shape.push_back(M);
  out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape, a.dtype());
  Tensor al = lowp_copy(a), bl = lowp_copy(b);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = al.data<T>();
    const T* y = bl.data<T>();
    T* z = out.data<T>();
    if (batch_b.empty() && !ta) {
      // b is one matrix: fold a's batch into its rows, one gemm for everything.
      gemm(false, tb, shape_numel(batch) * M, N, K, x, y, z, 0);
      return;
    }
    // One gemm per batch element; batch strides (in matrices) handle broadcasting.
    Shape batch_shape = batch;
    batch_shape.push_back(1);  // a trailing 1 so the odometer walks one matrix per "row"
    Shape pa = batch_a, pb = batch_b;
    pa.push_back(1);
    pb.push_back(1);
    std::vector<int64_t> sa = kernels::broadcast_strides(pa, batch_shape);
    std::vector<int64_t> sb = kernels::broadcast_strides(pb, batch_shape);
    kernels::for_each_row(batch_shape, sa, sb, [&](int64_t i, int64_t ia, int64_t ib) {
      gemm(ta, tb, M, N, K, x + ia * M * K, y + ib * K * N, z + i * M * N, 0);
    });
  });
  out = lowp_round(out);
  return record(out, "matmul", {a, b}, [a, b, ta, tb](const Tensor& dout) {
    Tensor g = lowp_copy(dout);
    // C = op(A) op(B): d op(A) = dC op(B)^T and d op(B) = op(A)^T dC, transposed back when flagged.
    if (a.requires_grad()) {
      Tensor da = ta ? matmul(b, g, Transposed{tb, true}) : matmul(g, b, Transposed{false, !tb});
      accumulate_grad(a, lowp_round(sum_to(da, a.shape())));
    }
    if (b.requires_grad()) {
      Tensor db = tb ? matmul(g, a, Transposed{true, ta}) : matmul(a, g, Transposed{!ta, false});
      accumulate_grad(b, lowp_round(sum_to(db, b.shape())));
    }
  });
}

Tensor matmul(const Tensor& a, const Tensor& b) { return matmul(a, b, Transposed{}); }
Tensor matmul_bt(const Tensor& a, const Tensor& b) { return matmul(a, b, Transposed{false, true}); }
Tensor matmul_at(const Tensor& a, const Tensor& b) { return matmul(a, b, Transposed{true, false}); }

// ---- linear, and linear + GELU fused ----

// Checks linear's operands; returns the number of rows R of x seen as (R, in).
static int64_t linear_rows(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* op) {
  kernels::check_same_dtype(x, weight, op);
  if (weight.dim() != 2 || x.dim() < 1 || x.size(-1) != weight.size(1))
    throw ShapeError(std::string(op) + ": input " + shape_str(x.shape()) + " does not fit weight " +
                     shape_str(weight.shape()) + " (expected (..., in) and (out, in))");
  if (bias.defined() && (bias.dim() != 1 || bias.size(0) != weight.size(0) || bias.dtype() != x.dtype()))
    throw ShapeError(std::string(op) + ": bias " + shape_str(bias.shape()) + " does not fit weight " +
                     shape_str(weight.shape()));
  return x.numel() / std::max<int64_t>(weight.size(1), 1);
}

// Which linear layers multiply on small_gemm (small_gemm.h), which reads x, W and dy where they lie,
// instead of OpenBLAS, which packs its operands on every call:
// - at least two panels of rows (2 * kPanelRows): with fewer (generation with the KV cache, one row
//   per sequence) making W^T costs more than the product saves, and OpenBLAS keeps them;
// - a small weight, at most 2^17 elements (512 KB in float), so W, W^T and dW stay in a core's L2
//   cache; read in place, a larger W^T would stream from L3 for every 8 rows of x;
// - or, when this build's vectors hold 8 floats or more (AVX2, AVX-512: kLargeWeightsDirect), a
//   weight up to 2^22 elements (GPT-2 small's MLP has 2.4M), made once per call into small_gemm's
//   panels; with 4-float vectors (SSE, NEON) OpenBLAS's kernels keep them. W^T, W's panels and the
//   per-chunk dW are scratch copies of W (up to 9), so a 50257-token LM head stays on OpenBLAS.
// The measurements behind these limits: bench/README.md, "How the speed is won".
constexpr int64_t kSmallWeight = int64_t(1) << 17;
constexpr int64_t kLargestDirectWeight = int64_t(1) << 22;
constexpr int64_t kPanelRows = 256;
constexpr bool kWideTiles = xsimd::batch<float>::size >= 16;  // AVX-512 tiles
constexpr bool kLargeWeightsDirect = xsimd::batch<float>::size >= 8;
constexpr int64_t kFineBlockWeight = int64_t(1) << 15;  // from here a block of 64 rows is >= 4 MFLOP
static bool direct_linear(int64_t rows, int64_t in, int64_t out) {
  const bool fits = in * out <= kSmallWeight || (in * out <= kLargestDirectWeight && kLargeWeightsDirect);
  return fits && rows >= 2 * kPanelRows;
}

// y (R, out) = x W^T + b on the blocks of blas::for_each_gemm_block (on small_gemm: blocks of 64
// rows once W has kFineBlockWeight elements, 128 for a large W), then `after(m0, m1, n0, n1)` runs
// on each block while it is still in cache. One hand-off to the thread pool for the product.
// On small_gemm (direct_linear), W is first transposed into W^T (in, out), which it reads row by
// row, and the bias is added as each tile of y is stored; otherwise each block's rows of y are set
// to b and OpenBLAS adds the product (beta 1). The transpose is cut in two halves of W's rows on
// the pool: done by the calling thread alone, the other one waited for it, and W, last written by
// the optimizer, comes from memory.
//
// On small_gemm every row of y has the same bits however the rows are cut, so from kFineBlockWeight
// elements of W the blocks are small and many (up to kFineChunksPerThread chunks per thread,
// threads.h), and a thread that falls behind does not leave the other waiting for a large last
// block. Smaller weights keep 8 blocks: a block of 64 rows would take only a few microseconds.
template <class T, class After>
static void linear_forward(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t in, int64_t out,
                           After after) {
  if (direct_linear(rows, in, out) && kernels::packs_b<T>(in, out)) {
    // A large W: W^T made straight in small_gemm's panels (panel p = W's rows [p P, p P + w)
    // transposed), a share of the panels per thread; then blocks of rows, each against all of them.
    thread_local std::vector<T> scratch;  // the calling thread's W^T in panels; kept between calls
    T* wt = kernels::scratch_of(scratch, static_cast<size_t>(in * out));
    constexpr int64_t P = kernels::kPanelWidth<T>, kRows = kPanelRows / 2;
    parallel_for((out + P - 1) / P, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t width = std::min(P, out - p * P);
        kernels::transpose_block(width, in, w + p * P * in, in, wt + p * P * in, width);
      }
    });
    parallel_for((rows + kRows - 1) / kRows, 1, kFineChunksPerThread, [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t m0 = blk * kRows, m1 = std::min(rows, m0 + kRows);
        kernels::small_gemm_prepacked(m1 - m0, out, in, T(1), x + m0 * in, in, int64_t(1), wt, T(0), y + m0 * out, out,
                                      b);
        after(m0, m1, int64_t(0), out);
      }
    });
    return;
  }
  if (direct_linear(rows, in, out)) {
    thread_local std::vector<T> scratch;  // the calling thread's W^T; kept between calls
    T* wt = kernels::scratch_of(scratch, static_cast<size_t>(in * out));
    const int64_t half = ((out + 1) / 2 + 7) / 8 * 8;  // W's rows [0, half) and [half, out): whole 8 x 8 tiles
    parallel_for(2, 1, [&](int64_t h0, int64_t h1) {
      for (int64_t h = h0; h < h1; ++h) {
        const int64_t n0 = h * half, n1 = std::min(out, n0 + half);
        if (n0 < n1) kernels::transpose_block(n1 - n0, in, w + n0 * in, in, wt + n0, out);  // W^T's columns
      }
    });
    auto block = [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
      kernels::small_gemm(m1 - m0, n1 - n0, in, T(1), x + m0 * in, in, int64_t(1), wt + n0, out, T(0),
                          y + m0 * out + n0, out, b ? b + n0 : nullptr);
      after(m0, m1, n0, n1);
    };
    if (in * out < kFineBlockWeight) {
      blas::for_each_gemm_block(rows, out, in, block);
      return;
    }
    constexpr int64_t kRows = 64;
    parallel_for((rows + kRows - 1) / kRows, 1, kFineChunksPerThread, [&](int64_t b0, int64_t b1) {
      for (int64_t k = b0; k < b1; ++k) block(k * kRows, std::min(rows, (k + 1) * kRows), int64_t(0), out);
    });
    return;
  }
  blas::for_each_gemm_block(rows, out, in, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    if (b)
      for (int64_t r = m0; r < m1; ++r) std::copy(b + n0, b + n1, y + r * out + n0);
    blas::gemm(false, true, m1 - m0, n1 - n0, in, T(1), x + m0 * in, in, w + n0 * in, in, b ? T(1) : T(0),
               y + m0 * out + n0, out);
    after(m0, m1, n0, n1);
  });
}

// The backward of a linear layer on small_gemm (direct_linear: a small weight, or a large one in
// builds with vectors of 8 floats or more), in one pass over dy: its rows are cut into `chunks`
// consecutive chunks (fixed by the shape, one thread on each at a time) and each chunk walks its
// panels of kPanelRows rows. While a panel of dy is in cache it gives the panel's rows of dx = dy W,
// adds the panel's dy^T x to the chunk's dW (both on small_gemm: a large W packed into its panels
// once per call; with tiles narrower than AVX-512, dy^T and x copied per panel by
// small_gemm_packed_a) and its column sums to the chunk's db. Done as three passes over the whole
// batch instead (two products and a column sum), dy (4 MB in small's MLP) would come from memory
// three times (bench/README.md, the row-panel figures). Chunk 0 adds into the .grad tensors
// themselves, the others into scratch that is added
// to them after, in chunk order: the same bits for any number of threads. `dy_rows(r0, r1)` points
// at rows [r0, r1) of dy; linear_gelu makes them there, dy times its kept GELU slope (into a buffer
// of the thread's own), so its dpre is never written out.
//
// The chunks fix the order of dW's sums, so a thread that falls behind cannot hand part of its
// chunk's dW to the other. Its dx it can: a row of dx depends on that row of dy alone, and comes
// out with the same bits whichever thread computes it. So dx is cut into pieces of kDxRows rows,
// one claim each (DxPieces): a chunk's thread does a panel's dW first and then claims the panel's
// pieces front to back, and a thread that has finished its own chunks claims the pieces of the
// chunks still running from their far end (making those rows of dy again for itself), until the
// two meet. The cores of a VM drift apart by a few percent from one millisecond to the next; this
// way the two threads end a linear layer's backward together.

// How many chunks, or 0 when the panel pass does not apply (not a small weight, or fewer rows
// than two panels: direct_linear): one per 1024 rows, 2 to 8, an even count.
static int64_t linear_panel_chunks(int64_t rows, int64_t in, int64_t out) {
  if (!direct_linear(rows, in, out)) return 0;
  const int64_t chunks = std::clamp<int64_t>(rows / 1024, 2, 8);
  return chunks - chunks % 2;
}

// One flag per piece of dx: whoever takes a piece first computes it, exactly once.
class DxPieces {
 public:
  explicit DxPieces(int64_t n) : taken_(static_cast<size_t>(n)) {}  // all false (value-initialised)
  bool take(int64_t i) {
    return !taken_[static_cast<size_t>(i)].load() && !taken_[static_cast<size_t>(i)].exchange(true);
  }

 private:
  std::vector<std::atomic<bool>> taken_;
};

static std::atomic<int64_t> g_dx_pieces_taken_over{0};

int64_t kernels::linear_dx_pieces_taken_over() { return g_dx_pieces_taken_over.load(); }

constexpr int64_t kDxRows = 64;  // rows per piece of dx; a panel (kPanelRows) is 4 pieces
static_assert(kPanelRows % kDxRows == 0, "a panel is whole pieces of dx");

template <class T, class DyRows>
static void linear_backward_panels(int64_t chunks, const T* x, const T* w, DyRows dy_rows, T* dx, T* dw, T* db,
                                   int64_t rows, int64_t in, int64_t out) {
  const int64_t per_chunk = ((rows + chunks - 1) / chunks + 15) / 16 * 16;  // a multiple of 16 rows
  const int64_t part = in * out + (db ? out : 0);                           // one chunk's dW then db in the scratch
  thread_local std::vector<T> scratch;                                      // the calling thread's; kept between calls
  T* parts = kernels::scratch_of(scratch, static_cast<size_t>((chunks - 1) * part));  // not zeroed: see `fresh`
  // A large W is packed into small_gemm's panels once for all the panels of dy (small_gemm would
  // pack it again for each), a share of the panels per thread.
  const bool packed = kernels::packs_b<T>(out, in);
  thread_local std::vector<T> w_scratch;  // the calling thread's; the pool's threads use it by this pointer
  T* w_panels = nullptr;
  if (packed) {
    constexpr int64_t P = kernels::kPanelWidth<T>;
    w_panels = kernels::scratch_of(w_scratch, static_cast<size_t>(in * out));
    parallel_for((in + P - 1) / P, 1, [&](int64_t p0, int64_t p1) {
      kernels::pack_panels(out, p0 * P, std::min(in, p1 * P), w, in, w_panels + p0 * P * out);
    });
  }
  // dx's rows [r0, r1) from d, dy's same rows
  auto dx_rows = [&](const T* d, int64_t r0, int64_t r1) {
    if (packed)
      kernels::small_gemm_prepacked(r1 - r0, in, out, T(1), d, out, int64_t(1), w_panels, T(0), dx + r0 * in, in);
    else kernels::small_gemm(r1 - r0, in, out, T(1), d, out, int64_t(1), w, in, T(0), dx + r0 * in, in);  // dx = dy W
  };
  const int64_t pieces_per_chunk = (per_chunk + kDxRows - 1) / kDxRows;  // piece j of chunk c: c * this + j
  DxPieces pieces(chunks * pieces_per_chunk);
  std::atomic<int64_t> begun{0};  // chunks a thread has begun
  parallel_for(chunks, 1, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      begun.fetch_add(1);
      const int64_t first = c * per_chunk, end = std::min(rows, first + per_chunk);
      T* dw_c = c == 0 ? dw : parts + (c - 1) * part;
      T* db_c = c == 0 ? db : (db ? dw_c + in * out : nullptr);
      // A chunk's own dW is not zeroed first (on the calling thread alone, that was 7 MB per layer
      // of medium): its first panel writes it (beta 0), which gives the bits of adding to zeros,
      // as a tile's sum, started at +0, is never -0. Medium's steps in turn, old/new: 1.0075
      // (Cooperlake kernels), 1.0106 (Haswell).
      bool fresh = c > 0;
      if (fresh && db_c) std::fill(db_c, db_c + out, T(0));
      for (int64_t r0 = first; r0 < end; r0 += kPanelRows) {
        const int64_t r1 = std::min(end, r0 + kPanelRows), n = r1 - r0;
        const T* d = dy_rows(r0, r1);
        // dW += dy^T x; with AVX2 tiles on a copy of both (small_gemm_packed_a), the same bits
        if constexpr (kWideTiles)
          kernels::small_gemm(out, in, n, T(1), d, int64_t(1), out, x + r0 * in, in, fresh ? T(0) : T(1), dw_c, in);
        else
          kernels::small_gemm_packed_a(out, in, n, T(1), d, int64_t(1), out, x + r0 * in, in, fresh ? T(0) : T(1), dw_c,
                                       in);
        fresh = false;
        if (db_c)
          for (int64_t r = 0; r < n; ++r)
            for (int64_t j = 0; j < out; ++j) db_c[j] += d[r * out + j];
        for (int64_t p0 = r0; p0 < r1; p0 += kDxRows) {  // then the panel's dx, the pieces not taken yet
          if (!pieces.take(c * pieces_per_chunk + (p0 - first) / kDxRows)) break;  // the rest are taken too
          dx_rows(d + (p0 - r0) * out, p0, std::min(r1, p0 + kDxRows));
        }
      }
      if (fresh) std::fill(dw_c, dw_c + in * out, T(0));  // a chunk without rows (not with today's counts)
      // Once every chunk has begun (this thread gets no other), the dx pieces still open in the
      // chunks other threads are running, from their far end.
      if (begun.load() < chunks) continue;
      for (int64_t k = 1; k < chunks; ++k) {
        const int64_t o = (c + k) % chunks, o_first = o * per_chunk, o_end = std::min(rows, o_first + per_chunk);
        for (int64_t j = (o_end - o_first + kDxRows - 1) / kDxRows - 1; j >= 0; --j) {
          if (!pieces.take(o * pieces_per_chunk + j)) break;  // met its thread (or another helper)
          g_dx_pieces_taken_over.fetch_add(1, std::memory_order_relaxed);
          const int64_t p0 = o_first + j * kDxRows, p1 = std::min(o_end, p0 + kDxRows);
          dx_rows(dy_rows(p0, p1), p0, p1);
        }
      }
    }
  });
  parallel_for(out, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(in, 1)), [&](int64_t o0, int64_t o1) {
    for (int64_t c = 1; c < chunks; ++c) {
      const T* p = parts + (c - 1) * part;
      for (int64_t i = o0 * in; i < o1 * in; ++i) dw[i] += p[i];
    }
  });
  if (db)
    for (int64_t c = 1; c < chunks; ++c) {
      const T* p = parts + (c - 1) * part + in * out;
      for (int64_t j = 0; j < out; ++j) db[j] += p[j];
    }
}

// linear_backward_panels when it applies (float32 without autocast rounding, x and W both wanting
// gradients, a small W): allocates dx and, where .grad is not there yet, dW and db. False when it
// does not apply; the caller then runs linear_backward.
template <class T, class DyRows>
static bool linear_backward_fused(const Tensor& x, const Tensor& weight, const Tensor& bias, DyRows dy_rows,
                                  int64_t rows, int64_t in, int64_t out) {
  const int64_t chunks = linear_panel_chunks(rows, in, out);
  if (chunks == 0 || autocast_precision() != Precision::fp32 || !x.requires_grad() || !weight.requires_grad())
    return false;
  const bool with_bias = bias.defined() && bias.requires_grad();
  Tensor dx = Tensor::empty(x.shape(), x.dtype());
  Tensor dw = leaf_grad(weight), db = with_bias ? leaf_grad(bias) : Tensor();
  const bool dw_new = !dw.defined(), db_new = with_bias && !db.defined();
  if (dw_new) dw = Tensor::zeros(weight.shape(), weight.dtype());
  if (db_new) db = Tensor::zeros(bias.shape(), bias.dtype());
  linear_backward_panels<T>(chunks, x.data<T>(), weight.data<T>(), dy_rows, dx.data<T>(), dw.data<T>(),
                            with_bias ? db.data<T>() : nullptr, rows, in, out);
  accumulate_grad(x, std::move(dx));
  if (dw_new) accumulate_grad(weight, std::move(dw));
  if (db_new) accumulate_grad(bias, std::move(db));
  return true;
}

// Backward of y = x W^T + b given dy (R, out), with xl, wl the (rounded) copies the forward
// multiplied: dx = dy W, dW += dy^T x, db += the sum of dy over rows (in row order).
template <class T>
static void linear_backward(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& xl,
                            const Tensor& wl, const T* dy, int64_t rows, int64_t in, int64_t out_features) {
  if (x.requires_grad()) {  // dx (R, in) = dy (R, out) @ W (out, in)
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    gemm(false, false, rows, in, out_features, dy, wl.data<T>(), dx.data<T>(), 0);
    accumulate_grad(x, lowp_round(std::move(dx)));
  }
  if (weight.requires_grad()) {  // dW (out, in) = dy^T (out, R) @ x (R, in)
    Tensor dw = leaf_grad(weight);
    bool direct = dw.defined() && autocast_precision() == Precision::fp32;  // add into .grad
    if (!direct) dw = Tensor::empty(weight.shape(), weight.dtype());
    gemm(true, false, out_features, in, rows, dy, xl.data<T>(), dw.data<T>(), direct ? 1 : 0);
    if (!direct) accumulate_grad(weight, lowp_round(std::move(dw)));
  }
  if (bias.defined() && bias.requires_grad()) {  // db = sum of dy over rows
    Tensor db = leaf_grad(bias);
    bool direct = db.defined();
    if (!direct) db = Tensor::zeros(bias.shape(), bias.dtype());
    T* d = db.data<T>();
    // Columns split over the pool; each column adds its rows in order (the same bits for any
    // split). A strip of 64 columns stays in registers while the rows go by.
    parallel_for(out_features, 64, [&](int64_t j0, int64_t j1) {
      constexpr int64_t kStrip = 64;
      for (int64_t s0 = j0; s0 < j1; s0 += kStrip) {
        const int64_t width = std::min(kStrip, j1 - s0);
        T acc[kStrip];
        std::copy(d + s0, d + s0 + width, acc);
        for (int64_t r = 0; r < rows; ++r) {
          const T* row = dy + r * out_features + s0;
          for (int64_t j = 0; j < width; ++j) acc[j] += row[j];
        }
        std::copy(acc, acc + width, d + s0);
      }
    });
    if (!direct) accumulate_grad(bias, std::move(db));
  }
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  JobLabel label("linear");
  const int64_t rows = linear_rows(x, weight, bias, "linear");
  const int64_t in = weight.size(1), out_features = weight.size(0);
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  Tensor out = Tensor::empty(out_shape, x.dtype());
  Tensor xl = lowp_copy(x), wl = lowp_copy(weight);
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    linear_forward<T>(xl.data<T>(), wl.data<T>(), bias.defined() ? bias.data<T>() : nullptr, out.data<T>(), rows, in,
                      out_features, [](int64_t, int64_t, int64_t, int64_t) {});
  });
  out = lowp_round(out);
  // Backward multiplies by the same rounded copies (autocast saves its casts for backward too).
  return record(out, "linear", {x, weight, bias},
                [x, weight, bias, xl, wl, rows, in, out_features](const Tensor& dout) {
                  Tensor g = lowp_copy(dout);
                  dispatch(x.dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* d = g.data<T>();
                    auto dy_rows = [d, out_features](int64_t r0, int64_t) { return d + r0 * out_features; };
                    if (!linear_backward_fused<T>(x, weight, bias, dy_rows, rows, in, out_features))
                      linear_backward<T>(x, weight, bias, xl, wl, d, rows, in, out_features);
                  });
                },
                {xl, wl});
}

// gelu(x W^T + b). GELU runs on each block of the product right after it (row blocks: the block
// is a contiguous range of y starting at a multiple of 16 elements, so every value takes the same
// SIMD path as in gelu() and the result is bit for bit gelu(linear(x, W, b))). The same pass turns
// the block of pre = x W^T + b into its slope gelu'(pre), in place, from the tanh or erf it has just
// computed for GELU (gelu_forward_and_slope: the bits of gelu's own backward): backward needs
// nothing else of pre, and then takes no tanh or erf of its own. Backward: dpre = dy * slope, then
// linear's backward on dpre. Under fp16/bf16 autocast it is the composition itself (which rounds
// between the two).
Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias, GeluApprox approx) {
  JobLabel label("linear_gelu");
  const int64_t rows = linear_rows(x, weight, bias, "linear_gelu");
  if (autocast_precision() != Precision::fp32) return gelu(linear(x, weight, bias), approx);
  const int64_t in = weight.size(1), out_features = weight.size(0);
  const bool tanh_form = approx == GeluApprox::tanh;
  Shape out_shape = x.shape();
  out_shape.back() = out_features;
  // Without a graph (evaluation, generation) nothing keeps the slope: the product goes straight
  // into the output and GELU replaces it there, one buffer instead of two (the same bits of y).
  const bool keep_slope =
      grad_enabled() && (x.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  Tensor out = Tensor::empty(out_shape, x.dtype());
  Tensor slope = keep_slope ? Tensor::empty(out_shape, x.dtype()) : Tensor();  // x W^T + b, then gelu' of it
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* y = out.data<T>();
    T* p = keep_slope ? slope.data<T>() : y;
    auto gelu_block = [&](int64_t i0, int64_t i1) {
      if (keep_slope) kernels::gelu_forward_and_slope(p + i0, y + i0, p + i0, i1 - i0, tanh_form);
      else kernels::gelu_forward(y + i0, y + i0, i1 - i0, tanh_form);
    };
    bool column_blocks = false;
    linear_forward<T>(x.data<T>(), weight.data<T>(), bias.defined() ? bias.data<T>() : nullptr, p, rows, in,
                      out_features, [&](int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
                        if (n0 != 0 || n1 != out_features) column_blocks = true;  // GELU after the product
                        else gelu_block(m0 * out_features, m1 * out_features);
                      });
    if (column_blocks) parallel_blocks(out.numel(), gelu_block);
  });
  return record(out, "linear_gelu", {x, weight, bias},
                [x, weight, bias, slope, rows, in, out_features](const Tensor& dout) {
                  dispatch(x.dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T *g = dout.data<T>(), *p = slope.data<T>();
                    auto times = [](auto a, auto b) { return a * b; };
                    // dpre = dy * slope, a panel of rows at a time into the thread's own buffer
                    auto dpre_rows = [g, p, out_features, times](int64_t r0, int64_t r1) {
                      thread_local std::vector<T> panel;
                      T* d = kernels::scratch_of(panel, static_cast<size_t>((r1 - r0) * out_features));
                      simd::map2(g + r0 * out_features, p + r0 * out_features, d, (r1 - r0) * out_features, times);
                      return static_cast<const T*>(d);
                    };
                    if (linear_backward_fused<T>(x, weight, bias, dpre_rows, rows, in, out_features)) return;
                    const Tensor dpre = kernels::map2(dout, slope, times);
                    linear_backward<T>(x, weight, bias, x, weight, dpre.data<T>(), rows, in, out_features);
                  });
                },
                {slope});
}

}  // namespace sf
