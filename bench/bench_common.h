// bench_common.h: what the benchmarks that run the PyTorch reference as a child share.
#pragma once
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sf::bench {

// Runs a command and returns the last line of its stdout that parses as a JSON object (null when
// none does: a child that failed prints nothing).
inline nlohmann::json run_json(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return nlohmann::json();
  std::string out;
  char buf[4096];
  while (size_t got = fread(buf, 1, sizeof buf, pipe)) out.append(buf, got);
  pclose(pipe);
  std::istringstream lines(out);
  nlohmann::json result;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line[0] == '{') result = nlohmann::json::parse(line, nullptr, false);
  return result.is_discarded() ? nlohmann::json() : result;
}

// Median of a list (0 when empty); the mean of the two middle values for an even count.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace sf::bench
