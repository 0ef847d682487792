// progress.h: what the training loop shows while it runs. On a terminal, one progress bar redrawn
// in place (step/total, loss, lr, grad norm, tokens/s, ETA); when stdout is a file or a pipe,
// a plain log line every `log_interval` steps instead, so logs stay readable.
#pragma once
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf {

// One training step, as the bar and the log lines show it.
struct StepReport {
  int64_t step = 0;  // 1-based: steps done so far
  double loss = 0;
  double lr = 0;
  double grad_norm = 0;
  double tokens_per_sec = 0;  // this step's rate, shown when `seconds` is not given
  double loss_scale = 0;      // 0: not shown (no loss scaling)
  // The step's tokens and seconds: when given, the rate shown is over all the steps since the last
  // log line (a plain line shows its interval's rate, not the rate of the one step it lands on).
  double tokens = 0, seconds = 0;
};

// "1h02m", "3m05s", "12s"
std::string format_duration(double seconds);
// "12.3k", "1.20M", "950"
std::string format_si(double x);

class Progress {
 public:
  // `first_step` is the step a resumed run starts from (its ETA counts only what is left).
  Progress(int64_t total_steps, int64_t log_interval, std::ostream& out, bool terminal, int64_t first_step = 0);
  // Redraws the bar (terminal) or prints a line every log_interval steps and at the last step.
  void update(const StepReport& r);
  // Prints a full line (an evaluation, a checkpoint note) without garbling the bar.
  void line(const std::string& text);
  // Ends the bar's line.
  void finish();
  // When steps cost differently (lesson 14 trains six models of growing size one after the
  // other), the ETA counts the work left instead of the steps left: the steps form segments of
  // `segment_steps`, and every step of segment i costs costs[i] (any unit, e.g. measured seconds).
  void set_segment_costs(std::vector<double> costs, int64_t segment_steps);
  // Seconds since construction.
  double elapsed() const;
  static bool stdout_is_terminal();

 private:
  std::string eta(int64_t step) const;
  double work_until(int64_t step) const;  // the cost of steps [0, step)
  int64_t total_, interval_;
  std::ostream& out_;
  bool terminal_, bar_shown_ = false;
  int64_t first_step_;
  std::chrono::steady_clock::time_point start_;
  std::vector<double> segment_costs_;  // empty: every step costs the same
  int64_t segment_steps_ = 0;
  double interval_tokens_ = 0, interval_seconds_ = 0;  // since the last log line
};

}  // namespace sf
