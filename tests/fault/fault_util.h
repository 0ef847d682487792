// fault_util.h: what the fault and run-folder tests share: a temporary folder, the tiny config,
// and reading a run's metrics.
#pragma once
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace sf::test {

namespace fs = std::filesystem;

inline const std::string kTiny = std::string(SF_SOURCE_DIR) + "/tests/fault/tiny.json";

// A fresh folder under /tmp, removed (and a tmpfs mounted on it unmounted) afterwards.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("sf_fault_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    ::umount2(path.c_str(), MNT_DETACH);  // when a test mounted a tmpfs here (harmless otherwise)
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// (step, loss) of every "train" row of a run's metrics.jsonl, in file order.
inline std::vector<std::pair<int64_t, double>> train_losses(const fs::path& run_dir) {
  std::ifstream in(run_dir / "metrics.jsonl");
  std::vector<std::pair<int64_t, double>> rows;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    REQUIRE_MESSAGE(!j.is_discarded(), "metrics.jsonl holds a broken line: " << line);
    if (j.value("kind", "") == "train") rows.emplace_back(j.at("step").get<int64_t>(), j.at("loss").get<double>());
  }
  return rows;
}

// `scratchformer train tests/fault/tiny.json --set output.run_dir=RUN extra...`
inline std::vector<std::string> train_args(const fs::path& run_dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> a{"train", kTiny, "--set", "output.run_dir=" + run_dir.string()};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace sf::test
