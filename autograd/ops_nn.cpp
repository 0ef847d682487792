// ops_nn.cpp: the fused neural-network ops: each validates, calls its forward kernel and records
// its backward right below. The softmax and LayerNorm row kernels live in autograd/cpu/rows.h;
// tests check each op against its composition of primitives and against the plain formula in
// autograd/reference.h.
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/graph.h"
#include "autograd/cpu/kernels.h"
#include "autograd/ops.h"
#include "autograd/cpu/rows.h"
#include "autograd/cpu/simd.h"
#include "autograd/cpu/threads.h"

namespace sf {

using kernels::layer_norm_row;
using kernels::layer_norm_row_backward;
using kernels::Rows;
using kernels::softmax_backward;
using kernels::softmax_forward;

// ---- softmax ----
// y = e^(x - max) / sum e^(x - max);  dx = y * (dy - sum(dy * y)). A fully masked row gives zeros.
Tensor softmax(const Tensor& a, int64_t axis) {
  Rows rows(a.shape(), normalize_axis(axis, a.dim(), "softmax"));
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    softmax_forward(a.data<T>(), out.data<T>(), rows);
  });
  return record(out, "softmax", {a}, [a, y = out.detach(), rows](const Tensor& dout) {
    Tensor da = Tensor::empty(a.shape(), a.dtype());
    dispatch(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      softmax_backward(y.data<T>(), dout.data<T>(), da.data<T>(), rows);
    });
    accumulate_grad(a, std::move(da));
  });
}

// ---- log_softmax ----
// y = x - max - log(sum e^(x - max));  dx = dy - e^y * sum(dy)
Tensor log_softmax(const Tensor& a, int64_t axis) {
  Rows rows(a.shape(), normalize_axis(axis, a.dim(), "log_softmax"));
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    T* y = out.data<T>();
    for (int64_t r = 0; r < rows.count(); ++r) {
      int64_t b = rows.base(r), s = rows.inner;
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t j = 0; j < rows.n; ++j) m = std::max(m, x[b + j * s]);
      T total = 0;
      for (int64_t j = 0; j < rows.n; ++j) total += std::exp(x[b + j * s] - m);
      T lse = m + std::log(total);
      for (int64_t j = 0; j < rows.n; ++j) y[b + j * s] = x[b + j * s] - lse;
    }
  });
  return record(out, "log_softmax", {a}, [a, y = out.detach(), rows](const Tensor& dout) {
    Tensor da = Tensor::empty(a.shape(), a.dtype());
    dispatch(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* yv = y.data<T>();
      const T* dy = dout.data<T>();
      T* dx = da.data<T>();
      for (int64_t r = 0; r < rows.count(); ++r) {
        int64_t b = rows.base(r), s = rows.inner;
        T total = 0;
        for (int64_t j = 0; j < rows.n; ++j) total += dy[b + j * s];
        for (int64_t j = 0; j < rows.n; ++j) dx[b + j * s] = dy[b + j * s] - std::exp(yv[b + j * s]) * total;
      }
    });
    accumulate_grad(a, std::move(da));
  });
}

// ---- masked_fill ----
// Walks a's rows with the mask's broadcast strides: no expanded copy of the mask is made.
template <class F>
static void for_each_masked(const Tensor& a, const Tensor& mask, F f) {
  std::vector<int64_t> sa = kernels::broadcast_strides(a.shape(), a.shape());
  std::vector<int64_t> sm = kernels::broadcast_strides(mask.shape(), a.shape());
  int64_t n = a.dim() ? a.shape().back() : 1;
  int64_t step = a.dim() ? sm.back() : 0;
  kernels::for_each_row(a.shape(), sa, sm, [&](int64_t, int64_t off_a, int64_t off_m) {
    for (int64_t j = 0; j < n; ++j) f(off_a + j, off_m + j * step);
  });
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, double value) {
  if (broadcast_shapes(a.shape(), mask.shape(), "masked_fill") != a.shape())
    throw ShapeError("masked_fill: mask " + shape_str(mask.shape()) + " does not broadcast to " + shape_str(a.shape()));
  Tensor m = mask.to(a.dtype()).detach();
  Tensor out = a.detach().clone();
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* mv = m.data<T>();
    T* y = out.data<T>();
    for_each_masked(a, m, [&](int64_t i, int64_t k) {
      if (mv[k] != 0) y[i] = static_cast<T>(value);
    });
  });
  return record(out, "masked_fill", {a},
                [a, m](const Tensor& dout) {
                  Tensor da = dout.clone();
                  dispatch(a.dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* mv = m.data<T>();
                    T* d = da.data<T>();
                    for_each_masked(a, m, [&](int64_t i, int64_t k) {
                      if (mv[k] != 0) d[i] = 0;
                    });
                  });
                  accumulate_grad(a, std::move(da));
                },
                {m});
}

// ---- dropout ----
Tensor dropout(const Tensor& a, double p, bool training, Generator& gen) {
  if (!(p >= 0.0 && p < 1.0)) throw ValueError("dropout: probability must be in [0, 1), got " + std::to_string(p));
  if (!training || p == 0.0) return a;
  // keep[i] is 0 or 1/(1-p): the forward multiplies by it and so does the backward.
  Tensor keep = Tensor::empty(a.shape(), a.dtype());
  double scale = 1.0 / (1.0 - p);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* k = keep.data<T>();
    for (int64_t i = 0, n = a.numel(); i < n; ++i) k[i] = gen.uniform() < p ? T(0) : static_cast<T>(scale);
  });
  Tensor out = kernels::map2(a, keep, [](auto x, auto k) { return x * k; });
  return record(out, "dropout", {a},
                [a, keep](const Tensor& dout) {
                  accumulate_grad(a, kernels::map2(dout, keep, [](auto g, auto k) { return g * k; }));
                },
                {keep});
}

// ---- embedding ----
Tensor embedding(const Tensor& weight, const IntTensor& ids) {
  JobLabel label("embedding");
  if (weight.dim() != 2) throw ShapeError("embedding: weight must be (V, C), got " + shape_str(weight.shape()));
  int64_t V = weight.size(0), C = weight.size(1);
  for (int64_t i = 0; i < ids.numel(); ++i)
    if (ids[i] < 0 || ids[i] >= V)
      throw ShapeError("embedding: token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                       " is outside the vocabulary [0, " + std::to_string(V) + ")");
  Shape out_shape = ids.shape;
  out_shape.push_back(C);  // (..., C)
  Tensor out = Tensor::empty(out_shape, weight.dtype());
  dispatch(weight.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* w = weight.data<T>();
    T* y = out.data<T>();
    parallel_for(ids.numel(), std::max<int64_t>(1, kElementGrain / std::max<int64_t>(C, 1)),
                 [&](int64_t i0, int64_t i1) {
                   for (int64_t i = i0; i < i1; ++i) std::copy(w + ids[i] * C, w + (ids[i] + 1) * C, y + i * C);
                 });
  });
  return record(out, "embedding", {weight}, [weight, ids](const Tensor& dout) {
    // Scatter-add: a token that appears k times receives the sum of its k row gradients.
    Tensor dw = leaf_grad(weight);  // add straight into .grad when it exists
    bool direct = dw.defined();
    if (!direct) dw = Tensor::zeros(weight.shape(), weight.dtype());
    int64_t C = weight.size(1);
    dispatch(weight.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* g = dout.data<T>();
      T* d = dw.data<T>();
      // Columns over the thread pool, in pieces of 16 (a 64-byte line of float32): each element
      // still adds its tokens' rows in order, so the same bits for any split.
      constexpr int64_t kLine = 16;
      const int64_t n = ids.numel(), pieces = (C + kLine - 1) / kLine;
      parallel_for(pieces, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(n * kLine, 1)),
                   [&](int64_t p0, int64_t p1) {
                     const int64_t c0 = p0 * kLine, c1 = std::min(C, p1 * kLine);
                     for (int64_t i = 0; i < n; ++i)
                       for (int64_t c = c0; c < c1; ++c) d[ids[i] * C + c] += g[i * C + c];
                   });
    });
    if (!direct) accumulate_grad(weight, std::move(dw));
  });
}

// ---- cross_entropy ----
// Per row: loss = lse - (1-eps) x_t - (eps/V) sum_j x_j, with lse = log sum_j e^x_j.
// d loss / d x_j = softmax_j - (1-eps) [j == t] - eps/V; the mean divides by the kept rows.
// Only the logits and one log-sum-exp per row are kept for backward.
Tensor cross_entropy(const Tensor& logits, const IntTensor& targets, int ignore_index, double label_smoothing) {
  JobLabel label("cross_entropy");
  if (logits.dim() < 1) throw ShapeError("cross_entropy: logits must be (..., V), got " + shape_str(logits.shape()));
  int64_t V = logits.size(-1), N = logits.numel() / std::max<int64_t>(V, 1);
  if (targets.numel() != N)
    throw ShapeError("cross_entropy: " + std::to_string(targets.numel()) + " targets for logits of shape " +
                     shape_str(logits.shape()) + " (" + std::to_string(N) + " rows)");
  if (!(label_smoothing >= 0.0 && label_smoothing <= 1.0))
    throw ValueError("cross_entropy: label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
  int64_t kept = 0;
  for (int64_t i = 0; i < N; ++i) {
    if (targets[i] == ignore_index) continue;
    if (targets[i] < 0 || targets[i] >= V)
      throw ShapeError("cross_entropy: target " + std::to_string(targets[i]) + " at position " + std::to_string(i) +
                       " is outside [0, " + std::to_string(V) + ")");
    ++kept;
  }
  auto lse = std::make_shared<std::vector<double>>(static_cast<size_t>(N));
  std::vector<double> row_loss(static_cast<size_t>(N), 0.0);  // per row, summed in row order below
  double eps = label_smoothing, total = 0;
  dispatch(logits.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = logits.data<T>();
    parallel_for(N, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(V, 1)), [&](int64_t i0, int64_t i1) {
      std::vector<T> scratch(static_cast<size_t>(V));
      for (int64_t i = i0; i < i1; ++i) {
        if (targets[i] == ignore_index) continue;
        const T* row = x + i * V;
        T m = simd::row_max(row, V);
        double l = static_cast<double>(m) + std::log(static_cast<double>(simd::exp_shifted(row, scratch.data(), V, m)));
        (*lse)[i] = l;
        double row_sum = 0;
        if (eps > 0)
          for (int64_t j = 0; j < V; ++j) row_sum += row[j];
        row_loss[i] = l - (1 - eps) * row[targets[i]] - eps / static_cast<double>(V) * row_sum;
      }
    });
  });
  for (int64_t i = 0; i < N; ++i)
    if (targets[i] != ignore_index) total += row_loss[i];
  // If every target is ignored the mean is over nothing: we return 0 (PyTorch returns NaN).
  double loss = kept ? total / static_cast<double>(kept) : 0.0;
  Tensor out = Tensor::scalar(loss, logits.dtype());
  return record(out, "cross_entropy", {logits}, [logits, targets, lse, kept, eps, ignore_index](const Tensor& dout) {
    if (kept == 0) return accumulate_grad(logits, Tensor::zeros(logits.shape(), logits.dtype()));
    Tensor dx = Tensor::empty(logits.shape(), logits.dtype());  // every row written below
    int64_t V = logits.size(-1), N = targets.numel();
    dispatch(logits.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* x = logits.data<T>();
      T* d = dx.data<T>();
      double scale = static_cast<double>(dout.data<T>()[0]) / static_cast<double>(kept);
      double smooth = eps / static_cast<double>(V);
      parallel_for(N, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(V, 1)), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          if (targets[i] == ignore_index) {
            std::fill(d + i * V, d + (i + 1) * V, T(0));
            continue;
          }
          // d = scale * (e^(x - lse) - eps/V), then -scale (1 - eps) at the target
          T l = static_cast<T>((*lse)[i]), sc = static_cast<T>(scale), sm = static_cast<T>(smooth);
          simd::map(x + i * V, d + i * V, V, [l, sc, sm](auto v) {
            using std::exp;
            return decltype(v)(sc) * (exp(v - decltype(v)(l)) - decltype(v)(sm));
          });
          d[i * V + targets[i]] -= static_cast<T>(scale * (1 - eps));
        }
      });
    });
    accumulate_grad(logits, std::move(dx));
  });
}

// ---- layer_norm ----
// y = (x - mean) * rstd * w + b per row of C; rstd = 1 / sqrt(var + eps), var biased.
// Backward, with xhat = (x - mean) rstd and g = dy * w:
//   dx = rstd (g - mean(g) - xhat mean(g xhat)),  dw = sum dy xhat,  db = sum dy.
// The row kernels are in autograd/cpu/rows.h; the formula in reference.h.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  JobLabel label("layer_norm");
  if (x.dim() < 1) throw ShapeError("layer_norm: input must be (..., C), got " + shape_str(x.shape()));
  int64_t C = x.size(-1), N = x.numel() / std::max<int64_t>(C, 1);
  for (const Tensor* p : {&weight, &bias})
    if (p->defined() && (p->shape() != Shape{C} || p->dtype() != x.dtype()))
      throw ShapeError("layer_norm: parameter " + shape_str(p->shape()) + " " + dtype_name(p->dtype()) +
                       " does not fit input " + shape_str(x.shape()) + " " + dtype_name(x.dtype()));
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  // mean and rstd per row, the only statistics backward needs besides x
  Tensor stats = Tensor::empty({N, 2}, x.dtype());
  dispatch(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* xv = x.data<T>();
    const T* w = weight.defined() ? weight.data<T>() : nullptr;
    const T* b = bias.defined() ? bias.data<T>() : nullptr;
    T* y = out.data<T>();
    T* st = stats.data<T>();
    parallel_for(N, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(C, 1)), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        std::tie(st[2 * i], st[2 * i + 1]) = layer_norm_row(xv + i * C, y + i * C, C, w, b, eps);
    });
  });
  return record(out, "layer_norm", {x, weight, bias},
                [x, weight, bias, stats](const Tensor& dout) {
                  int64_t C = x.size(-1), N = x.numel() / std::max<int64_t>(C, 1);
                  // dx adds straight into the .grad x has gathered so far, if any (a residual stream's, from the
                  // add after it): no tensor of its own and no pass of accumulate_grad over it.
                  const Tensor so_far = grad_so_far(x);
                  const bool add_dx = so_far.defined();
                  Tensor dx = !x.requires_grad() ? Tensor() : add_dx ? so_far : Tensor::empty(x.shape(), x.dtype());
                  // dw and db add straight into the parameters' .grad when it exists
                  bool direct_w = leaf_grad(weight).defined(), direct_b = leaf_grad(bias).defined();
                  Tensor dw = !weight.defined() || !weight.requires_grad() ? Tensor()
                              : direct_w                                   ? leaf_grad(weight)
                                                                           : Tensor::zeros(weight.shape(), x.dtype());
                  Tensor db = !bias.defined() || !bias.requires_grad() ? Tensor()
                              : direct_b                               ? leaf_grad(bias)
                                                                       : Tensor::zeros(bias.shape(), x.dtype());
                  dispatch(x.dtype(), [&](auto tag) {
                    using T = decltype(tag);
                    const T* xv = x.data<T>();
                    const T* dy = dout.data<T>();
                    const T* st = stats.data<T>();
                    const T* w = weight.defined() ? weight.data<T>() : nullptr;
                    T* dwv = dw.defined() ? dw.data<T>() : nullptr;
                    T* dbv = db.defined() ? db.data<T>() : nullptr;
                    T* dxv = dx.defined() ? dx.data<T>() : nullptr;
                    // Rows go in fixed blocks of 32, split over the threads; each block sums its own dw and db,
                    // then the blocks are added in order: the same bits for any number of threads.
                    constexpr int64_t kRows = 32;
                    const int64_t blocks = (N + kRows - 1) / kRows;
                    std::vector<T> partial(static_cast<size_t>(blocks * 2 * C), T(0));  // per block: dw, db
                    parallel_for(blocks, 1, [&](int64_t blk0, int64_t blk1) {
                      // With add_dx a row of dx is written here first and then added in: rounded on its own
                      // before the sum, as accumulate_grad adds it (one expression would let the compiler fuse
                      // the last multiply and the add into one FMA, with other bits).
                      std::vector<T> row(add_dx ? static_cast<size_t>(C) : 0);
                      for (int64_t blk = blk0; blk < blk1; ++blk) {
                        T* pw = partial.data() + blk * 2 * C;
                        for (int64_t i = blk * kRows; i < std::min(N, (blk + 1) * kRows); ++i) {
                          T* dx_row = !dxv ? nullptr : add_dx ? row.data() : dxv + i * C;
                          layer_norm_row_backward(xv + i * C, dy + i * C, C, st[2 * i], st[2 * i + 1], w, pw, pw + C,
                                                  dx_row);
                          if (add_dx)
                            simd::map2(dxv + i * C, dx_row, dxv + i * C, C, [](auto a, auto b) { return a + b; });
                        }
                      }
                    });
                    for (int64_t blk = 0; blk < blocks; ++blk) {
                      const T* pw = partial.data() + blk * 2 * C;
                      for (int64_t j = 0; j < C; ++j) {
                        if (dwv) dwv[j] += pw[j];
                        if (dbv) dbv[j] += pw[C + j];
                      }
                    }
                  });
                  if (dx.defined() && !add_dx) accumulate_grad(x, std::move(dx));
                  if (dw.defined() && !direct_w) accumulate_grad(weight, std::move(dw));
                  if (db.defined() && !direct_b) accumulate_grad(bias, std::move(db));
                },
                {stats});
}

}  // namespace sf
