// Lesson 13: mixed precision. The fp16 and bf16 number grids, a gradient that underflows in
// fp16, loss scaling rescuing it, and an overflow that makes the scaler skip a step.
// Text: 13_mixed_precision.md.
#include <cmath>
#include <cstdio>
#include <ostream>

#include "autograd/lowp.h"
#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/lessons.h"
#include "optim/grad_scaler.h"
#include "optim/sgd.h"

namespace sf::lessons {

static std::string sci(double x) { return fmt_sci(x, 6); }  // 6.103516e-05
static std::string hex16(uint16_t bits) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04X", bits);
  return buf;
}

MixedPrecisionResult run_lesson_mixed_precision(std::ostream& out) {
  MixedPrecisionResult r;

  heading(out, 1, "Two 16-bit grids");
  out << "fp16: 1 sign, 5 exponent, 10 mantissa bits. bf16: 1 sign, 8 exponent, 7 mantissa bits\n"
         "(float32's exponent, so float32's range, with 3 significant digits).\n";
  // [excerpt: grids]
  const double fp16_max = round_to_fp16(65504.0f);                  // (2 - 2^-10) * 2^15
  const double fp16_tiny = round_to_fp16(std::ldexp(1.0f, -24));    // smallest subnormal
  const double fp16_step = round_to_fp16(1.0f + std::ldexp(1.0f, -10)) - 1.0;  // spacing at 1
  const double bf16_max = round_to_bf16(std::ldexp(255.0f, 120));   // (2 - 2^-7) * 2^127
  const double bf16_tiny = round_to_bf16(std::ldexp(1.0f, -133));   // smallest subnormal
  const double bf16_step = round_to_bf16(1.0f + std::ldexp(1.0f, -7)) - 1.0;
  // [/excerpt]
  r.fp16 = {fp16_max, fp16_tiny, fp16_step};
  r.bf16 = {bf16_max, bf16_tiny, bf16_step};
  out << "                    fp16                      bf16\n";
  out << "  largest         " << sci(fp16_max) << " " << hex16(fp16_bits(65504.0f)) << "     " << sci(bf16_max)
      << " " << hex16(bf16_bits(std::ldexp(255.0f, 120))) << "\n";
  out << "  smallest > 0    " << sci(fp16_tiny) << " " << hex16(fp16_bits(std::ldexp(1.0f, -24))) << "     "
      << sci(bf16_tiny) << " " << hex16(bf16_bits(std::ldexp(1.0f, -133))) << "\n";
  out << "  spacing at 1    " << sci(fp16_step) << "            " << sci(bf16_step) << "\n";
  out << "what rounding does (round to nearest, ties to even):\n";
  for (float x : {65519.0f, 65520.0f, 1.0004f, 1.0006f, 3.0e-8f, 2.0e-8f, 1.0e-8f}) {
    std::string h = sci(round_to_fp16(x));
    out << "  fp16(" << sci(x) << ") = " << h << std::string(16 - h.size(), ' ') << "bf16 = "
        << sci(round_to_bf16(x)) << "\n";
  }
  r.fp16_65520 = round_to_fp16(65520.0f);
  r.fp16_1e8 = round_to_fp16(1.0e-8f);

  heading(out, 2, "A gradient that underflows in fp16");
  // [excerpt: underflow]
  // A linear layer whose gradients are around 2e-8: small inputs, small upstream gradients.
  Tensor x = Tensor::full({2, 4}, 1e-4);                        // (B, in)
  Tensor W = Tensor::full({3, 4}, 0.5).requires_grad_();        // (out, in)
  auto loss_of = [&] { return sum(linear(x, W)) * 1e-4; };     // dL/dW[j, i] = 1e-4 * sum_b x[b, i]
  loss_of().backward();                                         // float32
  Tensor dW32 = W.grad().clone();
  W.set_grad(Tensor());
  {
    AutocastGuard fp16(Precision::fp16);                        // matmuls round to fp16
    loss_of().backward();                                       // the backward rounds dW as well
  }
  Tensor dW16 = W.grad().clone();
  // [/excerpt]
  r.grad_fp32 = dW32.at({0, 0});
  r.grad_fp16 = dW16.at({0, 0});
  out << "dL/dW[0, 0] in float32:      " << sci(r.grad_fp32) << "\n";
  out << "dL/dW[0, 0] under fp16:      " << sci(r.grad_fp16) << "   (below half of 2^-24: rounds to 0)\n";
  int64_t zeros = 0;
  for (double v : dW16.to_vector()) zeros += v == 0.0;
  r.zero_fraction_fp16 = static_cast<double>(zeros) / static_cast<double>(dW16.numel());
  out << "zero gradient entries under fp16: " << zeros << " of " << dW16.numel() << ": this layer would never learn\n";

  heading(out, 3, "Loss scaling rescues it");
  // [excerpt: scaling]
  GradScaler scaler;                                            // S = 65536 = 2^16
  W.set_grad(Tensor());
  {
    AutocastGuard fp16(Precision::fp16);
    scaler.scale_loss(loss_of()).backward();                    // every gradient is S times larger
  }
  UnscaleStats stats = scaler.unscale({{"W", W}});              // back to true size, in float32
  // [/excerpt]
  r.grad_scaled = W.grad().at({0, 0});
  out << "scale S = " << fmt(scaler.scale(), 0) << ": the fp16 gradient is S * 2e-8 = "
      << sci(r.grad_scaled * scaler.scale()) << ", well inside the grid\n";
  out << "after unscaling:             " << sci(r.grad_scaled) << "\n";
  out << "relative error against float32: " << sci(std::fabs(r.grad_scaled - r.grad_fp32) / r.grad_fp32)
      << " (fp16's 10-bit mantissa)\n";
  out << "zero entries after unscaling: " << stats.zeros << " of " << stats.elements << "\n";
  r.zero_fraction_scaled = stats.zero_fraction();

  heading(out, 4, "An overflow makes the scaler skip the step and halve S");
  // [excerpt: overflow]
  Tensor x2 = Tensor::full({2, 4}, 1.0);                        // ordinary inputs
  Tensor W2 = Tensor::full({3, 4}, 0.5).requires_grad_();
  SGDOptions sgd;
  sgd.lr = 0.1;
  SGD opt({{"W2", W2}}, sgd);
  GradScaler scaler2;                                           // S = 65536 again
  for (int iter = 0; iter < 3; ++iter) {
    opt.zero_grad();
    {
      AutocastGuard fp16(Precision::fp16);
      scaler2.scale_loss(sum(linear(x2, W2))).backward();       // dW = 2, times S
    }
    double S = scaler2.scale();
    bool stepped = scaler2.step(opt);                           // unscale, check, maybe step
    scaler2.update();                                           // adjust S
    r.scales.push_back(S);
    r.stepped.push_back(stepped);
    r.weights.push_back(W2.at({0, 0}));
  }
  // [/excerpt]
  for (size_t i = 0; i < 3; ++i) {
    double S = r.scales[i], next = i + 1 < 3 ? r.scales[i + 1] : scaler2.scale();
    out << "  iteration " << i << ": S = " << fmt(S, 0) << ", scaled gradient 2 S = " << fmt(2 * S, 0)
        << (2 * S > 65504 ? " > 65504: inf" : " fits") << ", " << (r.stepped[i] ? "step taken" : "step SKIPPED")
        << ", W2[0, 0] = " << fmt(r.weights[i], 4) << ", next S = " << fmt(next, 0) << "\n";
  }
  r.steps_taken = opt.step_count();
  r.final_w = W2.at({0, 0});
  out << "optimizer steps taken: " << r.steps_taken << " of 3. A skipped step changes nothing (weights,\n"
         "Adam moments, step count); S then grows back by 2x after 2000 clean steps.\n";
  out << "bf16 has float32's exponent range, so it needs no loss scaling; it pays with 3 digits of\n"
         "precision instead of fp16's 3.3.\n";
  return r;
}

}  // namespace sf::lessons
