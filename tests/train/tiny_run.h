// tiny_run.h: a tiny language-modelling run for the training library's tests: a small corpus a tiny
// GPT learns in a few dozen steps, its config, and training with the log kept quiet.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "train/config.h"
#include "train/train.h"

namespace sf::test {

// A small corpus with structure a tiny model can learn quickly: words from a short list.
inline std::string tiny_corpus_path() {
  std::filesystem::path p = std::filesystem::temp_directory_path() / "sf_test_experiments" / "corpus.txt";
  if (!std::filesystem::exists(p)) {
    std::filesystem::create_directories(p.parent_path());
    const char* words[] = {"the cat sat. ", "a dog ran! ", "we see it? ", "to be or not. ", "all is well. "};
    std::ostringstream text;
    uint64_t x = 12345;
    for (int i = 0; i < 3000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      text << words[(x >> 33) % 5];
    }
    // Written beside it and renamed into place: ctest -j starts several test processes at once,
    // and one of them must never read the file half written by another.
    const std::filesystem::path part = p.string() + "." + std::to_string(::getpid());
    std::ofstream(part) << text.str();
    std::filesystem::rename(part, p);
  }
  return p.string();
}

inline Config tiny_config(const std::string& run_name) {
  Config c;
  c.data.dataset = Dataset::text;
  c.data.path = tiny_corpus_path();
  c.model.n_layer = 1;
  c.model.n_head = 2;
  c.model.n_embd = 32;
  c.model.block_size = 16;
  c.train.steps = 40;
  c.train.batch_size = 8;
  c.train.eval_interval = 10;
  c.train.eval_iters = 2;
  c.train.samples = 0;
  c.train.threads = 1;
  c.optim.lr = 3e-3;
  c.schedule.warmup_steps = 5;
  c.schedule.min_lr = 3e-4;
  c.output.run_dir = (std::filesystem::temp_directory_path() / "sf_test_experiments" / run_name).string();
  c.output.overwrite = true;
  c.output.plot = false;
  validate_config(c);
  return c;
}

// Runs a shell command; returns its stdout (and stderr when the command redirects it) and sets
// `exit_code` to its exit status (-1 when it did not exit normally or could not start).
inline std::string run_command(const std::string& command, int& exit_code) {
  std::string out;
  exit_code = -1;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  int status = ::pclose(pipe);
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The first line of `text` that starts with `prefix` ("" when there is none).
inline std::string line_starting(const std::string& text, const std::string& prefix) {
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (text.compare(pos, prefix.size(), prefix) == 0) return text.substr(pos, end - pos);
    pos = end + 1;
  }
  return "";
}

inline TrainResult quiet_train(const Config& c, TrainOptions o = {}) {
  std::ostringstream log;
  o.out = &log;
  return train(c, o);
}

// Config c trained without a stop, then again stopped after step `k` and resumed to the end.
struct StopAndResume {
  TrainResult full, first, rest;  // the uninterrupted run; the stopped run; the resumed part
  std::vector<double> joined;     // first's losses followed by rest's
};
inline StopAndResume train_stopped_and_resumed(const Config& c, int64_t k) {
  StopAndResume r;
  r.full = quiet_train(c);
  TrainOptions stop;
  stop.stop_after = k;
  r.first = quiet_train(c, stop);
  TrainOptions resume;
  resume.resume = true;
  r.rest = quiet_train(c, resume);
  r.joined = r.first.losses;
  r.joined.insert(r.joined.end(), r.rest.losses.begin(), r.rest.losses.end());
  return r;
}

}  // namespace sf::test
