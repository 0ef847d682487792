// cost_common.h: small helpers the lessons on attention's cost (19-25) share: a stopwatch for
// measured steps, byte counts printed for people, and a log-log gnuplot of measured curves.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sf::lessons {

// The fastest of `repeats` runs of f, in seconds (after one untimed warm-up run when warm_up).
double fastest_seconds(const std::function<void()>& f, int repeats, bool warm_up = true);

// 16777216 -> "16.0 MiB", 2415919104 -> "2.25 GiB", 512 -> "512 B" (powers of 1024).
std::string fmt_bytes(double bytes);

// 4194304 -> "4,194,304".
std::string fmt_count(int64_t n);

// One curve of a plot: y against the shared x values, with its legend title.
struct Curve {
  std::string title;
  std::vector<double> y;
};
// The gnuplot body of a plot of curves against x (log scales when asked).
std::string curves_plot(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                        const std::vector<double>& x, const std::vector<Curve>& curves, bool log_x, bool log_y);

}  // namespace sf::lessons
