// ops.h: every differentiable op, one free function each (forward and backward side by side
// in the .cpp named in each section). Elementwise ops broadcast like NumPy; their backward
// sums the gradient back to each input's shape. A shape or dtype mismatch throws ShapeError
// naming the op and both shapes.
#pragma once
#include <vector>

#include "autograd/int_tensor.h"
#include "autograd/tensor.h"

namespace sf {

// ---- elementwise, broadcasting (ops_elementwise.cpp) ----
Tensor add(const Tensor& a, const Tensor& b);  // a + b
Tensor sub(const Tensor& a, const Tensor& b);  // a - b
Tensor mul(const Tensor& a, const Tensor& b);  // a * b
Tensor div(const Tensor& a, const Tensor& b);  // a / b
Tensor neg(const Tensor& a);                   // -a
Tensor pow(const Tensor& a, double exponent);  // a^p, d/da = p a^(p-1)
Tensor exp(const Tensor& a);                   // e^a
Tensor log(const Tensor& a);                   // ln a
Tensor sqrt(const Tensor& a);                  // a^(1/2)
Tensor tanh(const Tensor& a);                  // tanh a, d = 1 - tanh^2
Tensor sigmoid(const Tensor& a);               // 1 / (1 + e^-a), d = s (1 - s)
Tensor relu(const Tensor& a);                  // max(a, 0)
enum class GeluApprox { none, tanh };
// x * Phi(x) with Phi the normal CDF (exact erf form, as nn.GELU()), or its tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (as nn.GELU(approximate="tanh")).
Tensor gelu(const Tensor& a, GeluApprox approx = GeluApprox::none);

Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, double s);
Tensor operator-(const Tensor& a, double s);
Tensor operator*(const Tensor& a, double s);
Tensor operator/(const Tensor& a, double s);
Tensor operator+(double s, const Tensor& a);
Tensor operator-(double s, const Tensor& a);
Tensor operator*(double s, const Tensor& a);
Tensor operator/(double s, const Tensor& a);

// The broadcast shape of a and b, or ShapeError naming `op` and both shapes.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);

// ---- reductions (ops_reduce.cpp) ----
// One axis is given the same way to sum, mean and max: sum(x, -1, true), max(x, -1, true).
// sum and mean also take several axes, sum(x, {0, 1}); `{-1}` still means the one axis -1.
Tensor sum(const Tensor& a);  // all elements -> shape ()
Tensor sum(const Tensor& a, int64_t axis, bool keepdim = false);
Tensor sum(const Tensor& a, const std::vector<int64_t>& axes, bool keepdim = false);
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, int64_t axis, bool keepdim = false);
Tensor mean(const Tensor& a, const std::vector<int64_t>& axes, bool keepdim = false);
// Max along one axis; the gradient goes to the (first) arg-max.
Tensor max(const Tensor& a, int64_t axis, bool keepdim = false);
// Sums a broadcast tensor back down to `shape` (the reduction every broadcasting backward needs).
Tensor sum_to(const Tensor& a, const Shape& shape);
// Broadcasts a to `shape` (a copy); backward is sum_to.
Tensor expand(const Tensor& a, const Shape& shape);

// ---- shape ops (ops_shape.cpp) ----
Tensor reshape(const Tensor& a, const Shape& shape);  // one dimension may be -1; shares data
Tensor transpose(const Tensor& a, int64_t axis0, int64_t axis1);
Tensor permute(const Tensor& a, const std::vector<int64_t>& axes);
Tensor slice(const Tensor& a, int64_t axis, int64_t start, int64_t end, int64_t step = 1);
Tensor concat(const std::vector<Tensor>& tensors, int64_t axis);

// ---- matrix products (ops_matmul.cpp), float32 -> sgemm, float64 -> dgemm ----
// (..., M, K) @ (..., K, N) -> (..., M, N) with broadcast batch dimensions.
Tensor matmul(const Tensor& a, const Tensor& b);
// a @ b^T and a^T @ b, the transposes of the last two dimensions passed to BLAS as flags (no
// copies). The attention scores are matmul_bt(q, k): (T, D) @ (S, D)^T -> (T, S).
Tensor matmul_bt(const Tensor& a, const Tensor& b);
Tensor matmul_at(const Tensor& a, const Tensor& b);
// The general form behind the three: op(a) @ op(b), op = transpose where the flag is set.
struct Transposed {
  bool a = false, b = false;
};
Tensor matmul(const Tensor& a, const Tensor& b, Transposed t);
// y = x W^T + b for x (..., in), W (out, in), b (out) or undefined: one gemm over all rows.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
// gelu(x W^T + b), a FeedForward's first half, as one op: GELU runs on each block of the product
// while it is in cache. Bit for bit gelu(linear(x, weight, bias), approx), gradients included.
Tensor linear_gelu(const Tensor& x, const Tensor& weight, const Tensor& bias, GeluApprox approx = GeluApprox::none);

// ---- neural-network ops, fused for speed and stability (ops_nn.cpp) ----
// softmax(a)_i = e^(a_i - max) / sum_j e^(a_j - max) along `axis`.
Tensor softmax(const Tensor& a, int64_t axis = -1);
Tensor log_softmax(const Tensor& a, int64_t axis = -1);
// out = a where mask == 0, value where mask != 0; mask (0/1 values) broadcasts to a's shape.
Tensor masked_fill(const Tensor& a, const Tensor& mask, double value);
// Inverted dropout: zero with probability p, scale survivors by 1/(1-p). Identity when !training.
Tensor dropout(const Tensor& a, double p, bool training, Generator& gen);
// Rows of weight (V, C) picked by ids: out shape = ids.shape + (C). Backward scatter-adds,
// so repeated ids sum their gradients. Ids outside [0, V) throw ShapeError.
Tensor embedding(const Tensor& weight, const IntTensor& ids);
// Mean cross-entropy of logits (..., V) against integer targets (...): fused log-softmax + NLL.
// Targets equal to ignore_index are skipped, the mean is over the rest. label_smoothing eps
// mixes the one-hot target with the uniform distribution: (1-eps) onehot + eps/V.
Tensor cross_entropy(const Tensor& logits, const IntTensor& targets, int ignore_index = -100,
                     double label_smoothing = 0.0);
// (x - mean) / sqrt(var + eps) * weight + bias over the last dimension; var is biased (/C).
// weight and bias are (C) or undefined.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

}  // namespace sf
