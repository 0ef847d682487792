// Lesson 13: the training loop's three numeric tools: learning-rate warmup and decay, gradient
// clipping (seen on a real spike), and one AdamW step by hand against the optimizer.
// Text: training.md.
#include <cmath>
#include <ostream>

#include "autograd/quiet_xsimd.h"  // before any xtensor header: see there
#include <xtensor/xmath.hpp>
#include <xtensor/xtensor.hpp>

#include "autograd/ops.h"
#include "lessons/lesson.h"
#include "lessons/training.h"
#include "lessons/common/pictures.h"
#include "nn/gpt.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/schedule.h"

namespace sf::lessons {

// A batch of B windows of length T from the repeating sequence 0 1 2 ... 7 0 1 ..., or, when
// `surprise`, of tokens 8..15 that the model has never seen, with random next tokens.
static void make_batch(Generator& gen, bool surprise, IntTensor& idx, IntTensor& targets) {
  const int64_t B = 8, T = 16;
  idx = IntTensor({B, T}, std::vector<int32_t>(static_cast<size_t>(B * T)));
  targets = idx;
  for (int64_t b = 0; b < B; ++b) {
    int64_t start = gen.randint(8);
    for (int64_t t = 0; t < T; ++t) {
      idx[b * T + t] = static_cast<int32_t>(surprise ? 8 + gen.randint(8) : (start + t) % 8);
      targets[b * T + t] = static_cast<int32_t>(surprise ? gen.randint(16) : (start + t + 1) % 8);
    }
  }
}

// The picture: the three schedules of step 1 at every step (cosine and linear side by side, noam
// on its own axis: its scale is 1000 times longer).
static std::string schedules_plot(const ScheduleOptions& cosine, const ScheduleOptions& linear,
                                  const ScheduleOptions& noam) {
  std::string s = "set multiplot layout 1,2\nset grid\nset xlabel 'step'\nset ylabel 'learning rate'\n$a << EOD\n";
  for (int64_t t = 0; t <= 150; ++t)
    s += std::to_string(t) + " " + fmt_sci(lr_at(cosine, t), 5) + " " + fmt_sci(lr_at(linear, t), 5) + "\n";
  s += "EOD\n$b << EOD\n";
  for (int64_t t = 0; t <= 64000; t += 250) s += std::to_string(t) + " " + fmt_sci(lr_at(noam, t), 5) + "\n";
  return s +
         "EOD\nset title 'warmup 10, decay to step 100' noenhanced\n"
         "plot $a using 1:2 with lines lw 2 lc rgb '#4271ae' title 'cosine', "
         "$a using 1:3 with lines lw 2 lc rgb '#c82829' title 'linear'\n"
         "set title 'noam, d_model 512, warmup 4000' noenhanced\n"
         "plot $b using 1:2 with lines lw 2 lc rgb '#3e999f' title 'noam'\nunset multiplot\n";
}

TrainingResult run_lesson_training(std::ostream& out) {
  TrainingResult r;

  heading(out, 1, "Learning-rate schedules, as numbers", "学习率调度，逐个数字来看");
  // [excerpt: schedules]
  ScheduleOptions cosine;
  cosine.kind = ScheduleKind::cosine;
  cosine.lr = 1e-3;
  cosine.min_lr = 1e-4;
  cosine.warmup_steps = 10;
  cosine.decay_steps = 100;
  ScheduleOptions linear = cosine;
  linear.kind = ScheduleKind::linear;
  ScheduleOptions noam;  // the Annotated Transformer's: lr is the factor
  noam.kind = ScheduleKind::noam;
  noam.lr = 1.0;
  noam.d_model = 512;
  noam.warmup_steps = 4000;
  // [/excerpt]
  out << tr(out, "cosine and linear: lr 1e-3, warmup 10 steps, decay to 1e-4 at step 100\n",
            "余弦与线性：lr 1e-3，预热 10 步，衰减到 1e-4（第 100 步）\n")
      << tr(out, "  step |   cosine   |   linear   | cosine, 40 # = 1e-3\n",
            "  步数 |    余弦    |    线性    | 余弦，40 个 # = 1e-3\n");
  for (int64_t s : {0, 1, 4, 9, 10, 25, 50, 75, 99, 100, 150}) {
    double c = lr_at(cosine, s);
    out << "  " << std::string(4 - std::to_string(s).size(), ' ') << s << " | " << fmt_sci(c, 4) << " | "
        << fmt_sci(lr_at(linear, s), 4) << " | " << std::string(static_cast<size_t>(std::lround(c / 1e-3 * 40)), '#')
        << "\n";
    r.cosine.push_back(c);
  }
  out << tr(out, "noam (d_model 512, warmup 4000): lr = 512^-0.5 * min(s^-0.5, s * 4000^-1.5), s = step + 1\n",
            "noam（d_model 512，预热 4000 步）：lr = 512^-0.5 * min(s^-0.5, s * 4000^-1.5)，s = step + 1\n");
  for (int64_t s : {0, 1000, 2000, 3999, 8000, 16000, 64000}) {
    double v = lr_at(noam, s);
    out << tr(out, "  step ", "  第 ") << s << tr(out, "", " 步") << std::string(6 - std::to_string(s).size(), ' ')
        << " lr " << fmt_sci(v, 4) << "\n";
    r.noam.push_back(v);
  }
  out << tr(out,
            "warmup keeps the first updates small while Adam's second-moment estimates are still\n"
            "noise; decay lets the model settle into a minimum at the end.\n",
            "学习率预热让最初几次更新保持很小，因为这时 Adam 的二阶矩估计还只是噪声；\n"
            "衰减则让模型在最后稳稳落进一个极小值。\n");

  draw_gnuplot(out, "training_schedules.png", schedules_plot(cosine, linear, noam), 1100, 460);

  heading(out, 2, "Gradient clipping on a real spike", "在一次真实的梯度尖峰上做梯度裁剪");
  // [excerpt: spike]
  GPTConfig cfg;
  cfg.vocab_size = 16;
  cfg.block_size = 16;
  cfg.n_layer = 2;
  cfg.n_head = 2;
  cfg.n_embd = 32;
  cfg.seed = 12;
  GPT model(cfg);
  AdamOptions adam;
  adam.lr = 3e-3;
  adam.weight_decay = 0.1;
  AdamW opt(model.named_parameters(), adam);
  Generator gen(120);
  IntTensor idx, targets;
  for (int64_t step = 0; step < 40; ++step) {  // learn the repeating sequence
    make_batch(gen, false, idx, targets);
    opt.zero_grad();
    Tensor loss = model.loss(idx, targets);
    loss.backward();
    double norm = clip_grad_norm(model.named_parameters(), 1.0);  // returns the norm before
    opt.step();
    r.norms.push_back(norm);
    r.losses.push_back(loss.item());
  }
  make_batch(gen, true, idx, targets);  // then a batch unlike anything seen
  opt.zero_grad();
  Tensor loss = model.loss(idx, targets);
  loss.backward();
  r.spike_norm = clip_grad_norm(model.named_parameters(), 1.0);
  r.clipped_norm = grad_norm(model.named_parameters());
  // [/excerpt]
  out << tr(out, "a 2-layer GPT learns 0 1 2 ... 7 0 1 ... (AdamW, lr 3e-3, clip at 1.0):\n",
            "一个 2 层的 GPT 学习 0 1 2 ... 7 0 1 ...（AdamW，lr 3e-3，裁剪阈值 1.0）：\n");
  for (int64_t s : {0, 5, 10, 20, 30, 39})
    out << tr(out, "  step ", "  第 ") << s << tr(out, "", " 步") << std::string(3 - std::to_string(s).size(), ' ')
        << tr(out, " loss ", " 损失 ") << fmt(r.losses[static_cast<size_t>(s)], 4)
        << tr(out, "   gradient norm ", "   梯度范数 ") << fmt(r.norms[static_cast<size_t>(s)], 4) << "\n";
  out << tr(out, "then one batch of unseen tokens 8..15 with random targets:\n",
            "接着来一批从没见过的词元 8..15，目标是随机的：\n")
      << tr(out, "  loss ", "  损失 ") << fmt(loss.item(), 4) << tr(out, "   gradient norm ", "   梯度范数 ")
      << fmt(r.spike_norm, 4) << tr(out, " (", "（是上一步的 ") << fmt(r.spike_norm / r.norms.back(), 0)
      << tr(out, "x the last step's)\n", " 倍）\n")
      << tr(out, "  after clip_grad_norm(params, 1.0): ", "  clip_grad_norm(params, 1.0) 之后：")
      << fmt(r.clipped_norm, 6) << "\n";
  out << tr(out,
            "clipping scales the whole gradient by 1.0 / norm: the direction is kept, the step size\n"
            "is bounded, so one strange batch cannot throw the weights far.\n",
            "裁剪把整个梯度乘以 1.0 / norm：方向不变，步长有了上限，\n"
            "一批古怪的数据就没法把权重甩得很远。\n");

  heading(out, 3, "One AdamW step by hand against the optimizer", "手算一步 AdamW，与优化器对照");
  // [excerpt: adamw_hand]
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  const xt::xtensor<double, 1> p0 = {1.0, -2.0, 0.5, 3.0}, g = {0.2, -0.1, 0.0, 4.0};
  xt::xtensor<double, 1> p = p0 * (1 - lr * wd);                      // decoupled weight decay
  xt::xtensor<double, 1> m = (1 - b1) * g;                            // m_1 = beta1 m_0 + (1 - beta1) g, m_0 = 0
  xt::xtensor<double, 1> v = (1 - b2) * g * g;                        // v_1 = beta2 v_0 + (1 - beta2) g^2
  xt::xtensor<double, 1> m_hat = m / (1 - b1), v_hat = v / (1 - b2);  // bias correction at t = 1
  xt::xtensor<double, 1> by_hand = p - lr * m_hat / (xt::sqrt(v_hat) + eps);
  // [/excerpt]
  const std::vector<double> p0_list(p0.begin(), p0.end()), g_list(g.begin(), g.end());
  // [excerpt: adamw_opt]
  Tensor w = Tensor::from_vector(p0_list, {2, 2}).requires_grad_();  // a (2, 2) weight: it decays
  w.set_grad(Tensor::from_vector(g_list, {2, 2}));
  AdamOptions o;
  o.lr = lr, o.beta1 = b1, o.beta2 = b2, o.eps = eps, o.weight_decay = wd;
  AdamW one({{"w", w}}, o);
  one.step();
  // [/excerpt]
  r.adamw_by_hand.assign(by_hand.begin(), by_hand.end());
  r.adamw_optimizer = w.to_vector();
  out << "p     = " << fmt_vec(p0_list, 4) << "\ng     = " << fmt_vec(g_list, 4) << "\n";
  out << tr(out, "by hand:       ", "手算：         ") << fmt_vec(r.adamw_by_hand, 6) << "\n";
  out << "sf::AdamW:     " << fmt_vec(r.adamw_optimizer, 6) << "\n";
  double diff = max_abs_diff(r.adamw_by_hand, r.adamw_optimizer);
  out << tr(out, "largest difference: ", "最大差值：")
      << (diff < 1e-6 ? std::string(tr(out, "below 1e-6", "小于 1e-6")) : fmt(diff, 7))
      << tr(out, " (the optimizer works in float32)\n", "（优化器用 float32 计算）\n");
  out << tr(out,
            "at t = 1, m_hat / sqrt(v_hat) = g / |g| = sign(g): every weight with a gradient moves by\n"
            "lr = 0.1 whatever the gradient's size (0.2 and 4.0 alike); a zero gradient moves only by\n"
            "the decay, 0.5 * lr * wd = 0.0005.\n",
            "在 t = 1 时，m_hat / sqrt(v_hat) = g / |g| = sign(g)：凡是有梯度的权重都移动\n"
            "lr = 0.1，与梯度大小无关（0.2 和 4.0 一样）；梯度为零的权重只因\n"
            "权重衰减移动 0.5 * lr * wd = 0.0005。\n");
  return r;
}

// The lesson's entry in the course (lessons/course.cpp places it in the reading order).
Lesson lesson_training() {
  return {"training", "The training loop: warmup schedules, clipping a real spike, AdamW by hand",
          "训练循环：学习率预热与调度、裁剪一次真实的梯度尖峰、手算 AdamW", printing(run_lesson_training)};
}

}  // namespace sf::lessons
