// Lesson 16: mixed precision. The fp16 and bf16 number grids, a gradient that underflows in
// fp16, loss scaling rescuing it, and an overflow that makes the scaler skip a step.
// Text: mixed_precision.md.
#include <cmath>
#include <cstdio>
#include <ostream>

#include "autograd/cpu/lowp.h"
#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/mixed_precision.h"
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

  heading(out, 1, "Two 16-bit grids", "两种 16 位数值网格");
  // Significant bits: the stored mantissa bits plus the implicit leading 1; in decimal digits,
  // bits * log10(2).
  const double fp16_digits = 11 * std::log10(2.0), bf16_digits = 8 * std::log10(2.0);
  r.fp16_digits = fp16_digits, r.bf16_digits = bf16_digits;
  out << tr(out,
            "fp16: 1 sign, 5 exponent, 10 mantissa bits. bf16: 1 sign, 8 exponent, 7 mantissa bits\n"
            "(float32's exponent, so float32's range, with 8 significant bits: about ",
            "fp16：1 位符号、5 位指数、10 位尾数。bf16：1 位符号、8 位指数、7 位尾数\n"
            "（指数与 float32 相同，所以范围也与 float32 相同；有效位 8 位，约合 ")
      << fmt(bf16_digits, 1) << tr(out, " decimal digits).\n", " 位十进制有效数字）。\n");
  // [excerpt: grids]
  const double fp16_max = round_to_fp16(65504.0f);                             // (2 - 2^-10) * 2^15
  const double fp16_tiny = round_to_fp16(std::ldexp(1.0f, -24));               // smallest subnormal
  const double fp16_step = round_to_fp16(1.0f + std::ldexp(1.0f, -10)) - 1.0;  // spacing at 1
  const double bf16_max = round_to_bf16(std::ldexp(255.0f, 120));              // (2 - 2^-7) * 2^127
  const double bf16_tiny = round_to_bf16(std::ldexp(1.0f, -133));              // smallest subnormal
  const double bf16_step = round_to_bf16(1.0f + std::ldexp(1.0f, -7)) - 1.0;
  // [/excerpt]
  r.fp16 = {fp16_max, fp16_tiny, fp16_step};
  r.bf16 = {bf16_max, bf16_tiny, bf16_step};
  out << "                    fp16                      bf16\n";
  out << tr(out, "  largest         ", "  最大值          ") << sci(fp16_max) << " " << hex16(fp16_bits(65504.0f))
      << "     " << sci(bf16_max) << " " << hex16(bf16_bits(std::ldexp(255.0f, 120))) << "\n";
  out << tr(out, "  smallest > 0    ", "  大于 0 的最小值 ") << sci(fp16_tiny) << " "
      << hex16(fp16_bits(std::ldexp(1.0f, -24))) << "     " << sci(bf16_tiny) << " "
      << hex16(bf16_bits(std::ldexp(1.0f, -133))) << "\n";
  out << tr(out, "  spacing at 1    ", "  1 附近的间距    ") << sci(fp16_step) << "            " << sci(bf16_step)
      << "\n";
  out << tr(out, "what rounding does (round to nearest, ties to even):\n",
            "舍入的效果（就近舍入，恰在中间时取偶数）：\n");
  for (float x : {65519.0f, 65520.0f, 1.0004f, 1.0006f, 3.0e-8f, 2.0e-8f, 1.0e-8f}) {
    std::string h = sci(round_to_fp16(x));
    out << "  fp16(" << sci(x) << ") = " << h << std::string(16 - h.size(), ' ') << "bf16 = " << sci(round_to_bf16(x))
        << "\n";
  }
  r.fp16_65520 = round_to_fp16(65520.0f);
  r.fp16_1e8 = round_to_fp16(1.0e-8f);

  heading(out, 2, "A gradient that underflows in fp16", "一个在 fp16 下发生下溢的梯度");
  // [excerpt: underflow]
  // A linear layer whose gradients are around 2e-8: small inputs, small upstream gradients.
  Tensor x = Tensor::full({2, 4}, 1e-4);                    // (B, in)
  Tensor W = Tensor::full({3, 4}, 0.5).requires_grad_();    // (out, in)
  auto loss_of = [&] { return sum(linear(x, W)) * 1e-4; };  // dL/dW[j, i] = 1e-4 * sum_b x[b, i]
  loss_of().backward();                                     // float32
  Tensor dW32 = W.grad().clone();
  W.set_grad(Tensor());
  {
    AutocastGuard fp16(Precision::fp16);  // matmuls round to fp16
    loss_of().backward();                 // the backward rounds dW as well
  }
  Tensor dW16 = W.grad().clone();
  // [/excerpt]
  r.grad_fp32 = dW32.at({0, 0});
  r.grad_fp16 = dW16.at({0, 0});
  out << tr(out, "dL/dW[0, 0] in float32:      ", "float32 下的 dL/dW[0, 0]：    ") << sci(r.grad_fp32) << "\n";
  out << tr(out, "dL/dW[0, 0] under fp16:      ", "fp16 下的 dL/dW[0, 0]：       ") << sci(r.grad_fp16)
      << tr(out, "   (below half of 2^-24: rounds to 0)\n", "   （不到 2^-24 的一半：舍入成 0）\n");
  int64_t zeros = 0;
  for (double v : dW16.to_vector()) zeros += v == 0.0;
  r.zero_fraction_fp16 = static_cast<double>(zeros) / static_cast<double>(dW16.numel());
  out << tr(out, "zero gradient entries under fp16: ", "fp16 下为零的梯度元素：") << zeros << tr(out, " of ", " / ")
      << dW16.numel() << tr(out, ": this layer would never learn\n", "：这一层永远学不到东西\n");

  heading(out, 3, "Loss scaling rescues it", "损失缩放救了它");
  // [excerpt: scaling]
  GradScaler scaler;  // S = 65536 = 2^16
  W.set_grad(Tensor());
  {
    AutocastGuard fp16(Precision::fp16);
    scaler.scale_loss(loss_of()).backward();  // every gradient is S times larger
  }
  UnscaleStats stats = scaler.unscale({{"W", W}});  // back to true size, in float32
  // [/excerpt]
  r.grad_scaled = W.grad().at({0, 0});
  out << tr(out, "scale S = ", "缩放因子 S = ") << fmt(scaler.scale(), 0)
      << tr(out, ": the fp16 gradient is S * 2e-8 = ", "：fp16 梯度变成 S * 2e-8 = ")
      << sci(r.grad_scaled * scaler.scale()) << tr(out, ", well inside the grid\n", "，稳稳落在网格之内\n");
  out << tr(out, "after unscaling:             ", "除回缩放因子之后：          ") << sci(r.grad_scaled) << "\n";
  out << tr(out, "relative error against float32: ", "相对 float32 的相对误差：")
      << sci(std::fabs(r.grad_scaled - r.grad_fp32) / r.grad_fp32)
      << tr(out, " (fp16's 10-bit mantissa)\n", "（来自 fp16 的 10 位尾数）\n");
  out << tr(out, "zero entries after unscaling: ", "除回之后为零的元素：") << stats.zeros << tr(out, " of ", " / ")
      << stats.elements << "\n";
  r.zero_fraction_scaled = stats.zero_fraction();

  heading(out, 4, "An overflow makes the scaler skip the step and halve S", "一次上溢让缩放器跳过这一步，并把 S 减半");
  // [excerpt: overflow]
  Tensor x2 = Tensor::full({2, 4}, 1.0);  // ordinary inputs
  Tensor W2 = Tensor::full({3, 4}, 0.5).requires_grad_();
  SGDOptions sgd;
  sgd.lr = 0.1;
  SGD opt({{"W2", W2}}, sgd);
  GradScaler scaler2;  // S = 65536 again
  for (int iter = 0; iter < 3; ++iter) {
    opt.zero_grad();
    {
      AutocastGuard fp16(Precision::fp16);
      scaler2.scale_loss(sum(linear(x2, W2))).backward();  // dW = 2, times S
    }
    double S = scaler2.scale();
    bool stepped = scaler2.step(opt);  // unscale, check, maybe step
    scaler2.update();                  // adjust S
    r.scales.push_back(S);
    r.stepped.push_back(stepped);
    r.weights.push_back(W2.at({0, 0}));
  }
  // [/excerpt]
  for (size_t i = 0; i < 3; ++i) {
    double S = r.scales[i], next = i + 1 < 3 ? r.scales[i + 1] : scaler2.scale();
    out << tr(out, "  iteration ", "  第 ") << i << tr(out, ": S = ", " 次迭代：S = ") << fmt(S, 0)
        << tr(out, ", scaled gradient 2 S = ", "，缩放后的梯度 2 S = ") << fmt(2 * S, 0)
        << (2 * S > 65504 ? tr(out, " > 65504: inf", " > 65504：inf") : tr(out, " fits", " 放得下"))
        << tr(out, ", ", "，")
        << (r.stepped[i] ? tr(out, "step taken", "执行更新") : tr(out, "step SKIPPED", "跳过更新"))
        << tr(out, ", W2[0, 0] = ", "，W2[0, 0] = ") << fmt(r.weights[i], 4) << tr(out, ", next S = ", "，下一个 S = ")
        << fmt(next, 0) << "\n";
  }
  r.steps_taken = opt.step_count();
  r.final_w = W2.at({0, 0});
  out << tr(out, "optimizer steps taken: ", "优化器实际更新的步数：") << r.steps_taken
      << tr(out,
            " of 3. A skipped step changes nothing (weights,\n"
            "Adam moments, step count); S then grows back by 2x after 2000 clean steps.\n",
            " / 3。跳过的一步什么都不改（权重、\n"
            "Adam 的矩估计、步数都不变）；之后 S 会再乘以 2（翻一倍），条件是连续 2000 步没有溢出。\n");
  out << tr(out,
            "bf16 has float32's exponent range, so it needs no loss scaling; it pays with precision:\n"
            "8 significant bits, ",
            "bf16 的指数范围与 float32 相同，所以不需要损失缩放；代价是精度：\n有效位 8 位，约 ")
      << fmt(bf16_digits, 1)
      << tr(out, " decimal digits, against fp16's 11 bits, ", " 位十进制数字，而 fp16 有 11 位，约 ")
      << fmt(fp16_digits, 1) << tr(out, " digits.\n", " 位。\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_mixed_precision() {
  return {"mixed-precision", "Mixed precision: fp16/bf16 grids, underflow, loss scaling, skipped steps",
          "混合精度：fp16/bf16 网格、下溢、损失缩放、跳过的更新", printing(run_lesson_mixed_precision)};
}

}  // namespace sf::lessons
