// lowp.h: emulated low precision (fp16 / bf16) for mixed-precision training.
//
// Values stay in float32 buffers but are rounded onto the fp16 or bf16 grid, the way autocast
// runs matmuls and elementwise activations on a GPU: round to nearest even; fp16 overflows to inf
// above 65504 and has subnormals down to 2^-24 (below half of that, zero); bf16 keeps float32's
// 8-bit exponent with a 7-bit mantissa. Ops that autocast keeps in float32 (softmax, layer-norm
// statistics, the loss) do not round.
#pragma once
#include <cstdint>

#include "autograd/tensor.h"

namespace sf {

enum class Precision { fp32, fp16, bf16 };
const char* precision_name(Precision p);  // "fp32" / "fp16" / "bf16"

float round_to_fp16(float x);  // nearest fp16 value, as a float
float round_to_bf16(float x);  // nearest bf16 value, as a float
uint16_t fp16_bits(float x);   // the IEEE binary16 encoding of round_to_fp16(x)
uint16_t bf16_bits(float x);   // the bfloat16 encoding of round_to_bf16(x)

// The precision that matmuls and activations currently emulate (thread-local, fp32 by default).
Precision autocast_precision();
// Sets the emulated precision for a scope, like `with torch.autocast(...)`.
class AutocastGuard {
 public:
  explicit AutocastGuard(Precision p);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  Precision previous_;
};

// Rounds a float32 tensor in place onto the `p` grid (no-op for fp32 or float64 tensors).
void round_inplace(Tensor& t, Precision p);
// Rounds t in place to the current autocast precision and returns it (a fresh op result).
Tensor lowp_round(Tensor t);
// A rounded copy of t for the current autocast precision (no graph), or t itself when there is
// nothing to round (fp32, float64): the low-precision input of a matmul.
Tensor lowp_copy(const Tensor& t);

}  // namespace sf
