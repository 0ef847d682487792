// clip.cpp: global-norm and value clipping, one loop per gradient (long ones over the thread pool).
#include "optim/clip.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "autograd/cpu/threads.h"

namespace sf {

// Calls f(x, n) with each defined gradient's elements, x typed as the gradient is.
template <class F>
static void for_each_grad(const NamedParameters& params, F f) {
  for (const auto& [name, p] : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    dispatch(g.dtype(), [&](auto tag) { f(g.data<decltype(tag)>(), g.numel()); });
  }
}

// The sum of squares of x[0..n) in double: eight independent partial sums in a fixed order (it
// vectorizes and stays deterministic).
template <class T>
static double sum_of_squares(const T* x, int64_t n) {
  double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) lane[j] += static_cast<double>(x[i + j]) * x[i + j];
  for (; i < n; ++i) lane[0] += static_cast<double>(x[i]) * x[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

// A stretch of one gradient: its elements [begin, begin + n).
struct Piece {
  Tensor grad;
  int64_t begin, n;
};

// Every defined gradient cut into pieces of at most `size` elements, in order.
static std::vector<Piece> pieces_of(const NamedParameters& params, int64_t size) {
  std::vector<Piece> pieces;
  for (const auto& [name, p] : params) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    for (int64_t begin = 0; begin < g.numel(); begin += size)
      pieces.push_back({g, begin, std::min(size, g.numel() - begin)});
  }
  return pieces;
}

// Calls f(i, x, n) for piece i with its n elements at x (typed as its gradient is), all the pieces
// in one job over the thread pool: a small model's gradients are mostly too short to be split on
// their own (bench_gpt's small shape had all 52 norms run on the calling thread alone).
template <class F>
static void for_each_piece(const std::vector<Piece>& pieces, F f) {
  parallel_for(static_cast<int64_t>(pieces.size()), 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const Piece& piece = pieces[static_cast<size_t>(i)];
      Tensor g = piece.grad;  // a handle to the same storage: writable through it
      dispatch(g.dtype(), [&](auto tag) { f(i, g.data<decltype(tag)>() + piece.begin, piece.n); });
    }
  });
}

// Each gradient goes in chunks of kNormChunk elements, their sums added in order: the chunks are
// fixed by the sizes, so any number of threads gives the same bits.
constexpr int64_t kNormChunk = int64_t(1) << 16;

double grad_norm(const NamedParameters& params) {
  const std::vector<Piece> chunks = pieces_of(params, kNormChunk);
  std::vector<double> sums(chunks.size());
  for_each_piece(chunks,
                 [&](int64_t i, const auto* x, int64_t n) { sums[static_cast<size_t>(i)] = sum_of_squares(x, n); });
  double sum_sq = 0;
  for (double v : sums) sum_sq += v;
  return std::sqrt(sum_sq);
}

double clip_grad_norm(const NamedParameters& params, double max_norm) {
  JobLabel label("clip_grad_norm");
  if (!(max_norm > 0) || !std::isfinite(max_norm))
    throw ConfigError("clip_grad_norm: max_norm must be a finite number > 0, got " + std::to_string(max_norm));
  const double norm = grad_norm(params);
  // The coefficient in float32 like torch's (its norm is a float32 tensor).
  const float coef = static_cast<float>(max_norm) / (static_cast<float>(norm) + 1e-6f);
  if (coef >= 1) return norm;  // torch multiplies by the clamped 1.0: a no-op
  for_each_piece(pieces_of(params, kElementGrain), [coef](int64_t, auto* x, int64_t n) {
    using T = std::remove_pointer_t<decltype(x)>;
    const T c = static_cast<T>(coef);
    for (int64_t i = 0; i < n; ++i) x[i] *= c;
  });
  return norm;
}

void clip_grad_value(const NamedParameters& params, double clip_value) {
  if (!(clip_value > 0) || !std::isfinite(clip_value))
    throw ConfigError("clip_grad_value: clip_value must be a finite number > 0, got " + std::to_string(clip_value));
  for_each_grad(params, [clip_value](auto* x, int64_t n) {
    using T = std::remove_pointer_t<decltype(x)>;
    const T hi = static_cast<T>(clip_value), lo = -hi;
    for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], lo, hi);
  });
}

}  // namespace sf
