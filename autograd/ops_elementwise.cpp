// ops_elementwise.cpp: arithmetic and activations, with NumPy broadcasting.
// Each op computes its result, then records its backward right below it.
#include <cmath>

#include "autograd/graph.h"
#include "autograd/cpu/gelu.h"
#include "autograd/cpu/kernels.h"
#include "autograd/cpu/lowp.h"
#include "autograd/ops.h"
#include "autograd/cpu/simd.h"
#include "autograd/cpu/threads.h"

namespace sf {

void kernels::check_same_dtype(const Tensor& a, const Tensor& b, const char* op) {
  if (a.dtype() != b.dtype())
    throw ShapeError(std::string(op) + ": dtype mismatch, " + dtype_name(a.dtype()) + " " + shape_str(a.shape()) +
                     " vs " + dtype_name(b.dtype()) + " " + shape_str(b.shape()));
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ShapeError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                       " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> kernels::broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (size_t k = 0; k < in.size(); ++k) {
    size_t i = in.size() - 1 - k, o = out.size() - 1 - k;
    strides[o] = in[i] == 1 ? 0 : stride;
    stride *= in[i];
  }
  return strides;
}

// out = f(a, b) with broadcasting. The innermost axis runs as a plain loop in which each
// operand is either contiguous (stride 1) or a repeated scalar (stride 0).
template <class F>
static Tensor broadcast_binary(const Tensor& a, const Tensor& b, const char* op, F f) {
  kernels::check_same_dtype(a, b, op);
  if (a.shape() == b.shape()) return kernels::map2(a, b, f);
  Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  Tensor out = Tensor::empty(shape, a.dtype());
  std::vector<int64_t> sa = kernels::broadcast_strides(a.shape(), shape);
  std::vector<int64_t> sb = kernels::broadcast_strides(b.shape(), shape);
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* z = out.data<T>();
    int64_t n = shape.empty() ? 1 : shape.back();
    bool ia = !shape.empty() && sa.back(), ib = !shape.empty() && sb.back();
    auto row = [&](int64_t r, int64_t off_a, int64_t off_b) {
      T* zr = z + r * n;
      const T* xr = x + off_a;
      const T* yr = y + off_b;
      if (ia && ib) {
        for (int64_t j = 0; j < n; ++j) zr[j] = f(xr[j], yr[j]);
      } else if (ia) {
        for (int64_t j = 0; j < n; ++j) zr[j] = f(xr[j], yr[0]);
      } else if (ib) {
        for (int64_t j = 0; j < n; ++j) zr[j] = f(xr[0], yr[j]);
      } else {
        for (int64_t j = 0; j < n; ++j) zr[j] = f(xr[0], yr[0]);
      }
    };
    // Rows over the thread pool (each element on its own: the same bits for any split), e.g. a GPT's
    // token embeddings + the position table, which ran on the calling thread alone.
    const int64_t rows = shape_numel(shape) / std::max<int64_t>(n, 1);
    parallel_for(rows, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(n, 1)),
                 [&](int64_t r0, int64_t r1) { kernels::for_each_row(shape, sa, sb, row, r0, r1); });
  });
  return out;
}

Tensor add(const Tensor& a, const Tensor& b) {
  JobLabel label("add");
  Tensor out = broadcast_binary(a, b, "add", [](auto x, auto y) { return x + y; });
  // b gets a copy of dout (accumulate_grad's rule: dout is still held here), a the buffer itself
  // when it needs no reduction: a residual add's backward then copies one gradient, not two.
  return record(out, "add", {a, b}, [a, b](Tensor dout) {
    accumulate_grad(b, sum_to(dout, b.shape()));
    accumulate_grad(a, dout.shape() == a.shape() ? std::move(dout) : sum_to(dout, a.shape()));
  });
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = broadcast_binary(a, b, "sub", [](auto x, auto y) { return x - y; });
  return record(out, "sub", {a, b}, [a, b](const Tensor& dout) {
    accumulate_grad(a, sum_to(dout, a.shape()));
    if (b.requires_grad()) accumulate_grad(b, sum_to(neg(dout), b.shape()));
  });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = broadcast_binary(a, b, "mul", [](auto x, auto y) { return x * y; });
  return record(out, "mul", {a, b}, [a, b](const Tensor& dout) {
    if (a.requires_grad()) accumulate_grad(a, sum_to(mul(dout, b), a.shape()));
    if (b.requires_grad()) accumulate_grad(b, sum_to(mul(dout, a), b.shape()));
  });
}

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = broadcast_binary(a, b, "div", [](auto x, auto y) { return x / y; });
  return record(out, "div", {a, b}, [a, b, y = out.detach()](const Tensor& dout) {
    if (a.requires_grad()) accumulate_grad(a, sum_to(div(dout, b), a.shape()));
    // d(a/b)/db = -a/b^2 = -out/b   (y: the output without its graph, so no reference cycle)
    if (b.requires_grad()) accumulate_grad(b, sum_to(neg(mul(dout, div(y, b))), b.shape()));
  });
}

Tensor neg(const Tensor& a) {
  Tensor out = kernels::map(a, [](auto x) { return -x; });
  return record(out, "neg", {a}, [a](const Tensor& dout) { accumulate_grad(a, neg(dout)); });
}

Tensor pow(const Tensor& a, double p) {
  Tensor out = kernels::map(a, [p](auto x) { return static_cast<decltype(x)>(std::pow(x, p)); });
  return record(out, "pow", {a}, [a, p](const Tensor& dout) {
    accumulate_grad(a, kernels::map2(dout, a, [p](auto g, auto v) {
                      return static_cast<decltype(v)>(g * p * std::pow(v, p - 1));
                    }));
  });
}

Tensor exp(const Tensor& a) {
  Tensor out = kernels::map(a, [](auto x) { return std::exp(x); });
  return record(out, "exp", {a}, [a, y = out.detach()](const Tensor& dout) {
    accumulate_grad(a, kernels::map2(dout, y, [](auto g, auto v) { return g * v; }));
  });
}

Tensor log(const Tensor& a) {
  Tensor out = kernels::map(a, [](auto x) { return std::log(x); });
  return record(out, "log", {a}, [a](const Tensor& dout) {
    accumulate_grad(a, kernels::map2(dout, a, [](auto g, auto v) { return g / v; }));
  });
}

Tensor sqrt(const Tensor& a) {
  Tensor out = kernels::map(a, [](auto x) { return std::sqrt(x); });
  return record(out, "sqrt", {a}, [a, y = out.detach()](const Tensor& dout) {
    accumulate_grad(a, kernels::map2(dout, y, [](auto g, auto v) { return g / (v + v); }));
  });
}

Tensor tanh(const Tensor& a) {
  Tensor out = lowp_round(kernels::map(a, [](auto x) { return std::tanh(x); }));
  return record(out, "tanh", {a}, [a, y = out.detach()](const Tensor& dout) {
    accumulate_grad(a, lowp_round(kernels::map2(dout, y, [](auto g, auto v) { return g * (1 - v * v); })));
  });
}

Tensor sigmoid(const Tensor& a) {
  Tensor out = lowp_round(kernels::map(a, [](auto x) { return 1 / (1 + std::exp(-x)); }));
  return record(out, "sigmoid", {a}, [a, y = out.detach()](const Tensor& dout) {
    accumulate_grad(a, lowp_round(kernels::map2(dout, y, [](auto g, auto v) { return g * v * (1 - v); })));
  });
}

Tensor relu(const Tensor& a) {
  Tensor out = lowp_round(kernels::map(a, [](auto x) { return x > 0 ? x : decltype(x)(0); }));
  return record(out, "relu", {a}, [a, y = out.detach()](const Tensor& dout) {
    accumulate_grad(a, lowp_round(kernels::map2(dout, y, [](auto g, auto v) { return v > 0 ? g : decltype(g)(0); })));
  });
}

// GELU: the row kernels and their formulas are in autograd/cpu/gelu.h.
Tensor gelu(const Tensor& a, GeluApprox approx) {
  JobLabel label("gelu");
  bool tanh_form = approx == GeluApprox::tanh;
  Tensor out = Tensor::empty(a.shape(), a.dtype());
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = a.data<T>();
    T* y = out.data<T>();
    parallel_blocks(a.numel(),
                    [&](int64_t i0, int64_t i1) { kernels::gelu_forward(x + i0, y + i0, i1 - i0, tanh_form); });
  });
  out = lowp_round(out);
  return record(out, "gelu", {a}, [a, tanh_form](const Tensor& dout) {
    accumulate_grad(a, lowp_round(kernels::gelu_grad(dout, a, tanh_form)));
  });
}

Tensor kernels::gelu_grad(const Tensor& dout, const Tensor& a, bool tanh_form) {
  Tensor da = Tensor::empty(a.shape(), a.dtype());
  dispatch(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* g = dout.data<T>();
    const T* x = a.data<T>();
    T* d = da.data<T>();
    parallel_blocks(
        a.numel(), [&](int64_t i0, int64_t i1) { kernels::gelu_backward(g + i0, x + i0, d + i0, i1 - i0, tanh_form); });
  });
  return da;
}

// ---- operators ----

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, double s) { return add(a, Tensor::scalar(s, a.dtype())); }
Tensor operator-(const Tensor& a, double s) { return sub(a, Tensor::scalar(s, a.dtype())); }
Tensor operator*(const Tensor& a, double s) { return mul(a, Tensor::scalar(s, a.dtype())); }
Tensor operator/(const Tensor& a, double s) { return div(a, Tensor::scalar(s, a.dtype())); }
Tensor operator+(double s, const Tensor& a) { return add(Tensor::scalar(s, a.dtype()), a); }
Tensor operator-(double s, const Tensor& a) { return sub(Tensor::scalar(s, a.dtype()), a); }
Tensor operator*(double s, const Tensor& a) { return mul(Tensor::scalar(s, a.dtype()), a); }
Tensor operator/(double s, const Tensor& a) { return div(Tensor::scalar(s, a.dtype()), a); }

}  // namespace sf
