// cost_common.cpp: the helpers of cost_common.h.
#include "lessons/common/cost_common.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>

#include "lessons/common/stage_model.h"
#include "lessons/lesson.h"
#include "optim/adam.h"
#include "optim/clip.h"
#include "optim/schedule.h"

namespace sf::lessons {

double fastest_seconds(const std::function<void()>& f, int repeats, bool warm_up) {
  if (warm_up) f();
  double best = INFINITY;
  for (int i = 0; i < std::max(1, repeats); ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

std::string fmt_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  if (u == 0) return fmt(bytes, 0) + " B";
  return fmt(bytes, bytes < 10 ? 2 : 1) + " " + units[u];
}

std::string fmt_count(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n), s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return n < 0 ? "-" + s : s;
}

// A text inside a single-quoted gnuplot string: ' is written ''.
static std::string quoted(const std::string& text) {
  std::string s;
  for (char c : text) s += c == '\'' ? std::string("''") : std::string(1, c);
  return s;
}

std::string curves_plot(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                        const std::vector<double>& x, const std::vector<Curve>& curves, bool log_x, bool log_y) {
  std::ostringstream s;
  s << "set title '" << quoted(title) << "' noenhanced\nset xlabel '" << quoted(xlabel) << "' noenhanced\nset ylabel '"
    << quoted(ylabel) << "' noenhanced\nset grid\nset key top left noenhanced\n";
  if (log_x) s << "set logscale x 2\n";
  if (log_y) s << "set logscale y\n";
  s << "$d << EOD\n";
  for (size_t i = 0; i < x.size(); ++i) {
    s << x[i];
    for (const Curve& c : curves) s << " " << (i < c.y.size() ? c.y[i] : NAN);
    s << "\n";
  }
  s << "EOD\nplot ";
  for (size_t c = 0; c < curves.size(); ++c)
    s << (c ? ", " : "") << "$d using 1:" << c + 2 << " with linespoints lw 2 pt 7 title '" << quoted(curves[c].title)
      << "'";
  s << "\n";
  return s.str();
}

// ---- small GPTs trained on Tiny Shakespeare ----

const CharCorpus& shakespeare_chars() {
  static const CharCorpus corpus = [] {
    StageData d = load_stage_data("shakespeare");
    return CharCorpus{d.train, d.val, d.tokenizer->vocab_size(), d.tokenizer};
  }();
  return corpus;
}

std::vector<double> train_small(GPT& model, const CharCorpus& corpus, const SmallTraining& t, Progress& progress,
                                int64_t first_step) {
  AdamOptions adam;
  adam.lr = t.lr;
  adam.beta2 = 0.99;
  adam.weight_decay = 0.1;
  AdamW optimizer(model.named_parameters(), adam);
  ScheduleOptions schedule{ScheduleKind::cosine, t.lr, t.lr / 10, std::max<int64_t>(1, t.steps / 10),
                           std::max<int64_t>(2, t.steps)};
  data::RandomWindows batches(corpus.train, t.block_size, t.batch_size, t.seed);
  std::vector<double> losses;
  model.train();
  for (int64_t step = 0; step < t.steps; ++step) {
    optimizer.set_lr(lr_at(schedule, step));  // lr
    data::LmBatch batch = batches.next();     // (B, T) inputs and targets
    optimizer.zero_grad();                    // forward, backward, step
    Tensor loss = model.loss(batch.inputs, batch.targets);
    loss.backward();
    double norm = clip_grad_norm(model.named_parameters(), 1.0);
    optimizer.step();
    losses.push_back(loss.item());  // log
    const int64_t done = first_step + step + 1;
    progress.update({done, losses.back(), optimizer.lr(), norm,
                     static_cast<double>(done * t.batch_size * t.block_size) / std::max(1e-9, progress.elapsed()), 0});
  }
  return losses;
}

double val_loss_of(GPT& model, const CharCorpus& corpus, int64_t T, int64_t windows) {
  NoGradGuard no_grad;
  model.eval();
  data::SequentialWindows all(corpus.val, T, 16);
  double total = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < all.num_batches() && count < windows * T; ++i) {
    data::LmBatch b = all.batch(i);
    const int64_t n = static_cast<int64_t>(b.targets.data.size());
    total += model.loss(b.inputs, b.targets).item() * static_cast<double>(n);
    count += n;
  }
  model.train();
  return total / static_cast<double>(count);
}

Progress lesson_progress(int64_t total_steps) {
  return Progress(total_steps, std::max<int64_t>(1, total_steps / 10), std::cerr, ::isatty(STDERR_FILENO) == 1);
}

}  // namespace sf::lessons
