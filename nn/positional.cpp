// positional.cpp: sinusoidal tables, the rotary op (forward and backward side by side), ALiBi.
//
// Legend: B batch, T time (queries), S keys, C channels, H heads, D head size.
#include "nn/positional.h"

#include <cmath>
#include <cstdlib>

#include "autograd/errors.h"
#include "autograd/graph.h"
#include "autograd/names.h"

namespace sf {

const char* pos_encoding_name(PosEncoding p) { return name_of(kPosEncodings, p); }

// ---- sinusoidal ----
Tensor sinusoidal_table(int64_t T, int64_t C, int64_t offset, DType dtype) {
  Tensor pe = Tensor::empty({T, C}, dtype);  // (T, C)
  dispatch(dtype, [&](auto tag) {
    using Tp = decltype(tag);
    Tp* out = pe.data<Tp>();
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        double freq = std::pow(10000.0, -static_cast<double>(c - c % 2) / static_cast<double>(C));
        double angle = static_cast<double>(offset + t) * freq;
        out[t * C + c] = static_cast<Tp>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
      }
  });
  return pe;
}

// ---- rope ----
// Rotates each (i, i + D/2) pair of every row by +theta (forward) or -theta (backward).
template <class Tp>
static void rotate(const Tp* x, Tp* y, int64_t rows, int64_t T, int64_t D, const double* cos_t, const double* sin_t,
                   double sign) {
  int64_t half = D / 2;
  for (int64_t r = 0; r < rows; ++r) {  // r = (b, h, t) flattened
    int64_t t = r % T;
    const Tp* xr = x + r * D;
    Tp* yr = y + r * D;
    const double* c = cos_t + t * half;
    const double* s = sin_t + t * half;
    for (int64_t i = 0; i < half; ++i) {
      double a = xr[i], b = xr[i + half], sn = sign * s[i];
      yr[i] = static_cast<Tp>(a * c[i] - b * sn);
      yr[i + half] = static_cast<Tp>(b * c[i] + a * sn);
    }
  }
}

Tensor rope(const Tensor& x, int64_t offset, double base) {
  if (x.dim() != 4) throw ShapeError("rope: x must be (B, H, T, D), got " + shape_str(x.shape()));
  const int64_t T = x.size(2), D = x.size(3), half = D / 2;
  if (D % 2 != 0) throw ShapeError("rope: head size D must be even, got " + std::to_string(D));
  // cos/sin tables (T, D/2), shared by forward and backward.
  auto cos_t = std::make_shared<std::vector<double>>(static_cast<size_t>(T * half));
  auto sin_t = std::make_shared<std::vector<double>>(static_cast<size_t>(T * half));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < half; ++i) {
      double theta =
          static_cast<double>(offset + t) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(D));
      (*cos_t)[static_cast<size_t>(t * half + i)] = std::cos(theta);
      (*sin_t)[static_cast<size_t>(t * half + i)] = std::sin(theta);
    }
  const int64_t rows = x.numel() / D;
  Tensor out = Tensor::empty(x.shape(), x.dtype());  // (B, H, T, D)
  dispatch(x.dtype(), [&](auto tag) {
    using Tp = decltype(tag);
    rotate(x.data<Tp>(), out.data<Tp>(), rows, T, D, cos_t->data(), sin_t->data(), +1.0);
  });
  return record(out, "rope", {x}, [x, cos_t, sin_t, rows, T, D](const Tensor& dout) {
    Tensor dx = Tensor::empty(x.shape(), x.dtype());  // the inverse rotation of dout
    dispatch(x.dtype(), [&](auto tag) {
      using Tp = decltype(tag);
      rotate(dout.data<Tp>(), dx.data<Tp>(), rows, T, D, cos_t->data(), sin_t->data(), -1.0);
    });
    accumulate_grad(x, std::move(dx));
  });
}

// ---- alibi ----
std::vector<double> alibi_slopes(int64_t H) {
  if (H <= 0) throw ConfigError("alibi: number of heads must be positive");
  auto power_of_two_slopes = [](int64_t n) {
    std::vector<double> s;
    double start = std::pow(2.0, -8.0 / static_cast<double>(n));
    for (int64_t h = 0; h < n; ++h) s.push_back(std::pow(start, static_cast<double>(h + 1)));
    return s;
  };
  int64_t n = 1;
  while (n * 2 <= H) n *= 2;  // closest power of two <= H
  std::vector<double> slopes = power_of_two_slopes(n);
  if (n == H) return slopes;
  std::vector<double> extra = power_of_two_slopes(2 * n);
  for (size_t i = 0; static_cast<int64_t>(slopes.size()) < H; i += 2) slopes.push_back(extra[i]);
  return slopes;
}

Tensor alibi_bias(const std::vector<double>& slopes, int64_t T, int64_t S, DType dtype) {
  const int64_t H = static_cast<int64_t>(slopes.size());
  Tensor bias = Tensor::empty({1, H, T, S}, dtype);  // (1, H, T, S)
  dispatch(dtype, [&](auto tag) {
    using Tp = decltype(tag);
    Tp* out = bias.data<Tp>();
    for (int64_t h = 0; h < H; ++h)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t s = 0; s < S; ++s)
          out[(h * T + t) * S + s] =
              static_cast<Tp>(-slopes[static_cast<size_t>(h)] * std::abs(static_cast<double>(S - T + t - s)));
  });
  return bias;
}

}  // namespace sf
