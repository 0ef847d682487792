// test_helpers.h: a scratch folder per test and checks on error messages.
#pragma once
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "data/text_dataset.h"

namespace sf::test {

// A fresh folder under the system temp dir, removed at the end of the scope.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name) {
    path = std::filesystem::temp_directory_path() / ("sf_data_" + name + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path operator/(const std::string& f) const { return path / f; }
};

// A text dataset config from its first fields (the rest keep their defaults).
inline sf::data::TextDataConfig text_cfg(const std::filesystem::path& path, double val_fraction, int64_t block_size,
                                         bool cache) {
  sf::data::TextDataConfig c;
  c.path = path;
  c.val_fraction = val_fraction;
  c.block_size = block_size;
  c.cache = cache;
  return c;
}

inline void write_bytes(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// Runs f, which must throw E, and returns the message.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  FAIL("expected an exception");
  return "";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Files left in a folder (to check that nothing half-written stays behind).
inline int count_files(const std::filesystem::path& dir) {
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++n;
  }
  return n;
}

}  // namespace sf::test
