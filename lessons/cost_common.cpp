// cost_common.cpp: the helpers of cost_common.h.
#include "lessons/cost_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "lessons/lesson.h"

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
  s << "set title '" << quoted(title) << "' noenhanced\nset xlabel '" << quoted(xlabel) << "' noenhanced\nset ylabel '" << quoted(ylabel)
    << "' noenhanced\nset grid\nset key top left noenhanced\n";
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
    s << (c ? ", " : "") << "$d using 1:" << c + 2 << " with linespoints lw 2 pt 7 title '" << quoted(curves[c].title) << "'";
  s << "\n";
  return s.str();
}

}  // namespace sf::lessons
