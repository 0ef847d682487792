// fuzz_common.h: what every fuzz target shares.
//
// A target hands the fuzzer's bytes to one real reader. The reader may refuse them only by
// throwing an sf::Error subclass (one clear line for a person to read); any other exception,
// a crash, a leak, a hang or a sanitizer report is a bug in the reader. An sf::Error with an
// empty or multi-line message is a bug too: the CLI prints it as "error: <message>".
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <string>
#include <string_view>

#include "autograd/errors.h"

namespace sf::fuzz {

// A scratch file for readers that take a path: one per process, rewritten for every input.
inline const std::string& scratch_path(const char* suffix) {
  static const std::string path = "/tmp/sf_fuzz_" + std::to_string(::getpid()) + "_" + suffix;
  return path;
}
inline void write_scratch(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", path.c_str());
    std::abort();
  }
}

[[noreturn]] inline void bug(const std::string& what) {
  std::fprintf(stderr, "FUZZ BUG: %s\n", what.c_str());
  std::abort();
}

// The message of an sf::Error must be one non-empty line.
inline void check_message(const sf::Error& e) {
  std::string_view m = e.what();
  if (m.empty()) bug("sf::Error with an empty message");
  if (m.find('\n') != std::string_view::npos) bug("sf::Error message spans lines: " + std::string(m));
}

// Runs f(); an sf::Error is the expected way to refuse input, anything else aborts (a finding).
template <class F>
void guarded(F&& f) {
  try {
    f();
  } catch (const sf::Error& e) { check_message(e); } catch (const std::exception& e) {
    bug(std::string("unexpected exception (not sf::Error): ") + e.what());
  }
}

}  // namespace sf::fuzz
