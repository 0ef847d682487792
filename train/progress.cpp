// progress.cpp: the progress bar and the plain log lines.
#include "train/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace sf {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0 || seconds >= 1e15) return "?";  // (llround needs it below 2^63)
  auto s = static_cast<int64_t>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
  else if (s >= 60) std::snprintf(buf, sizeof buf, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
  else std::snprintf(buf, sizeof buf, "%llds", (long long)s);
  return buf;
}

std::string format_si(double x) {
  char buf[32];
  if (x >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", x / 1e6);
  else if (x >= 1e3) std::snprintf(buf, sizeof buf, "%.1fk", x / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", x);
  return buf;
}

Progress::Progress(int64_t total_steps, int64_t log_interval, std::ostream& out, bool terminal, int64_t first_step)
    : total_(total_steps),
      interval_(log_interval),
      out_(out),
      terminal_(terminal),
      first_step_(first_step),
      start_(std::chrono::steady_clock::now()) {}

bool Progress::stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

double Progress::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::set_segment_costs(std::vector<double> costs, int64_t segment_steps) {
  segment_costs_ = std::move(costs);
  segment_steps_ = segment_steps;
}

double Progress::work_until(int64_t step) const {
  if (segment_costs_.empty() || segment_steps_ <= 0) return static_cast<double>(step);
  double work = 0;
  for (size_t i = 0; i < segment_costs_.size(); ++i) {
    const int64_t begin = static_cast<int64_t>(i) * segment_steps_;
    work += segment_costs_[i] * static_cast<double>(std::clamp<int64_t>(step - begin, 0, segment_steps_));
  }
  return work;
}

std::string Progress::eta(int64_t step) const {
  const double done = work_until(step) - work_until(first_step_);
  if (step <= first_step_ || done <= 0) return "?";
  return format_duration(elapsed() / done * (work_until(total_) - work_until(step)));
}

void Progress::update(const StepReport& r) {
  interval_tokens_ += r.tokens;
  interval_seconds_ += r.seconds;
  const double tokens_per_sec = interval_seconds_ > 0 ? interval_tokens_ / interval_seconds_ : r.tokens_per_sec;
  char stats[200];
  std::snprintf(stats, sizeof stats, "loss %.4f | lr %.2e | norm %.3f | %s tok/s", r.loss, r.lr, r.grad_norm,
                format_si(tokens_per_sec).c_str());
  std::string scale;
  if (r.loss_scale > 0) scale = " | scale " + format_si(r.loss_scale);
  if (terminal_) {
    const int width = 24;
    const double done = std::clamp(double(r.step) / double(std::max<int64_t>(total_, 1)), 0.0, 1.0);
    const int filled = static_cast<int>(width * done);
    std::string bar(static_cast<size_t>(filled), '#');
    bar += std::string(static_cast<size_t>(width - filled), '.');
    char head[64];
    std::snprintf(head, sizeof head, "%*lld/%lld [", (int)std::to_string(total_).size(), (long long)r.step,
                  (long long)total_);
    out_ << "\r\033[K" << head << bar << "] " << stats << scale << " | ETA " << eta(r.step) << std::flush;
    bar_shown_ = true;
    interval_tokens_ = interval_seconds_ = 0;  // the bar is redrawn every step: its rate is that step's
    return;
  }
  if (r.step % interval_ != 0 && r.step != total_) return;
  char head[64];
  std::snprintf(head, sizeof head, "step %lld/%lld | ", (long long)r.step, (long long)total_);
  out_ << head << stats << scale << " | " << format_duration(elapsed()) << " elapsed, ETA " << eta(r.step) << "\n"
       << std::flush;
  interval_tokens_ = interval_seconds_ = 0;
}

void Progress::line(const std::string& text) {
  if (terminal_ && bar_shown_) out_ << "\r\033[K";
  out_ << text << "\n" << std::flush;
  bar_shown_ = false;
}

void Progress::finish() {
  if (terminal_ && bar_shown_) out_ << "\n" << std::flush;
  bar_shown_ = false;
}

}  // namespace sf
