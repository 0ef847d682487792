// test_fault.cpp: the training run under faults, through the real CLI.
//
//  - kill -9 at random moments (also while checkpoints are being written), then --resume until
//    done: the losses equal the uninterrupted run's bit for bit, and after every kill each
//    checkpoint record on disk verifies (its tensor files have the recorded size and sha256);
//  - an unwritable run directory: one clear error at the start, exit code 2;
//  - a full disk (a small tmpfs, when this process may mount one): a clean stop with one error
//    line, the last checkpoint intact, and the run resumable elsewhere;
//  - a learning rate that makes the loss explode: stops naming the step and the loss, and in
//    anomaly mode the first op that produced a non-finite value.
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "autograd/graph.h"
#include "tests/bad_inputs/cli_runner.h"
#include "tests/fault/fault_util.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/train.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using sf::test::run_cli;

using sf::test::kTiny;
using sf::test::seconds_since;
using sf::test::TempDir;
using sf::test::train_args;
using sf::test::train_losses;

namespace {

// Every checkpoint record in the run verifies; returns how many there are.
int verify_checkpoints(const fs::path& run_dir) {
  int n = 0;
  if (!fs::exists(run_dir / "checkpoints")) return 0;
  for (const auto& e : fs::directory_iterator(run_dir / "checkpoints")) {
    std::string name = e.path().filename().string();
    if (e.path().extension() != ".json" || name.find(".tmp") != std::string::npos) continue;
    INFO("checkpoint record " << e.path());
    CHECK_NOTHROW(sf::read_checkpoint_record(e.path().string()));
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("kill -9 at random moments, then --resume: same losses bit for bit, no broken checkpoint") {
  REQUIRE(fs::exists(sf::test::cli_path()));
  TempDir tmp("kill");
  fs::path ref = tmp.path / "reference", run = tmp.path / "killed";

  auto t0 = std::chrono::steady_clock::now();
  sf::test::CliResult r = run_cli(train_args(ref), 300);
  double full_time = seconds_since(t0);
  INFO("reference run stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  auto expected = train_losses(ref);
  REQUIRE(expected.size() == 40);

  std::mt19937 rng(20261129);
  std::uniform_real_distribution<double> when(0.05, 0.9);
  int kills = 0, resumes = 0, restarts = 0;
  bool done = false;
  for (int attempt = 0; attempt < 12 && !done; ++attempt) {
    bool resume = fs::exists(run / "checkpoints" / "last.json");
    std::vector<std::string> args = resume ? std::vector<std::string>{"train", "--resume", run.string()}
                                           : train_args(run, {"--set", "output.overwrite=true"});
    (resume ? resumes : restarts)++;
    int out_fd, err_fd;
    pid_t pid = sf::test::spawn_cli(args, out_fd, err_fd);
    REQUIRE(pid > 0);
    if (attempt < 8) {  // the last attempts run to the end
      std::this_thread::sleep_for(std::chrono::duration<double>(when(rng) * full_time));
      ::kill(pid, SIGKILL);
    }
    sf::test::CliResult res = sf::test::collect(pid, out_fd, err_fd, 300);
    if (res.exit_code == 128 + SIGKILL) {
      ++kills;
    } else {
      INFO("attempt " << attempt << " stderr: " << res.err);
      REQUIRE(res.exit_code == 0);
      done = true;
    }
    verify_checkpoints(run);  // after every kill: each record on disk verifies
  }
  REQUIRE(done);
  MESSAGE("killed " << kills << " times; " << resumes << " resumes, " << restarts << " fresh starts");
  auto got = train_losses(run);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("row " << i);
    CHECK(got[i].first == expected[i].first);
    CHECK(got[i].second == expected[i].second);  // bit for bit
  }
}

TEST_CASE("an unwritable run directory: one clear error at the start, exit code 2") {
  REQUIRE(fs::exists(sf::test::cli_path()));
  TempDir tmp("unwritable");
  std::ofstream(tmp.path / "a_file") << "x";
  for (std::string dir : {std::string("/proc/sf_cannot_create/run"), (tmp.path / "a_file" / "run").string()}) {
    sf::test::CliResult r = run_cli(train_args(dir), 120);
    INFO("run_dir " << dir << ", stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(sf::test::lines_of(r.err).size() == 1);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(r.err.find(dir.substr(0, dir.size() - 4)) != std::string::npos);  // names the directory
  }
}

TEST_CASE("a full disk: a clean stop with one error line and the last checkpoint intact") {
  REQUIRE(fs::exists(sf::test::cli_path()));
  TempDir tmp("full");
  fs::path ref = tmp.path / "reference";
  REQUIRE(run_cli(train_args(ref), 300).exit_code == 0);
  auto expected = train_losses(ref);
  // Room for the run's small files and one and a half checkpoints: the first checkpoint fits,
  // the second (written next to the first before the first is removed) does not.
  auto pages = [](uintmax_t bytes) { return (bytes + 4095) / 4096 * 4096; };
  uintmax_t ckpt = 0, small = 0;
  for (const auto& e : fs::directory_iterator(ref / "checkpoints")) ckpt += pages(fs::file_size(e.path()));
  for (const char* f : {"config.json", "tokenizer.json", "metrics.jsonl", "metrics.csv", "run.json", ".lock"})
    if (fs::exists(ref / f)) small += pages(fs::file_size(ref / f));
  fs::path disk = tmp.path / "disk";
  fs::create_directories(disk);
  std::string opts = "size=" + std::to_string(small + ckpt + ckpt / 2 + 2 * 4096);
  if (::mount("tmpfs", disk.c_str(), "tmpfs", 0, opts.c_str()) != 0) {
    MESSAGE("skipped: cannot mount a tmpfs here (" << std::string(std::strerror(errno))
                                                   << "); needs root with CAP_SYS_ADMIN");
    return;
  }
  fs::path run = disk / "run";
  sf::test::CliResult r = run_cli(train_args(run), 300);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  auto lines = sf::test::lines_of(r.err);
  REQUIRE(!lines.empty());
  CHECK(lines.size() == 1);
  CHECK(lines.back().rfind("error: ", 0) == 0);
  CHECK(lines.back().find("No space left on device") != std::string::npos);
  // The last checkpoint is intact and nothing half-written is left.
  REQUIRE(fs::exists(run / "checkpoints" / "last.json"));
  json record = sf::read_checkpoint_record((run / "checkpoints" / "last.json").string());
  CHECK(record.at("step").get<int64_t>() == 2);
  for (const auto& e : fs::recursive_directory_iterator(run))
    CHECK_MESSAGE(e.path().filename().string().find(".tmp") == std::string::npos, "left behind: " << e.path());
  // Moved to a disk with room, it resumes and ends exactly as the uninterrupted run.
  fs::path moved = tmp.path / "moved";
  fs::copy(run, moved, fs::copy_options::recursive);
  sf::test::CliResult resumed = run_cli({"train", "--resume", moved.string()}, 300);
  INFO("resume stderr: " << resumed.err);
  REQUIRE(resumed.exit_code == 0);
  auto got = train_losses(moved);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i].second == expected[i].second);
}

TEST_CASE("an exploding learning rate stops the run naming the step and the loss") {
  REQUIRE(fs::exists(sf::test::cli_path()));
  TempDir tmp("explode");
  sf::test::CliResult r =
      run_cli(train_args(tmp.path / "run", {"--set", "optim.lr=1e6", "--set", "optim.grad_clip=0", "--set",
                                            "schedule.name=\"constant\"", "--set", "schedule.warmup_steps=0"}),
              120);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  auto lines = sf::test::lines_of(r.err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("training diverged at step ") != std::string::npos);
  CHECK(lines[0].find(": loss ") != std::string::npos);
}

TEST_CASE("anomaly mode names the first op whose output is not finite") {
  TempDir tmp("anomaly");
  sf::Config c = sf::load_config(kTiny, {"optim.lr=1e30", "optim.grad_clip=0", "schedule.name=\"constant\"",
                                         "schedule.warmup_steps=0", "output.run_dir=" + (tmp.path / "run").string()});
  std::ostringstream log;
  sf::TrainOptions opt;
  opt.out = &log;
  sf::AnomalyGuard anomaly(true);
  std::string msg;
  try {
    sf::train(c, opt);
  } catch (const sf::NumericalError& e) { msg = e.what(); }
  INFO("message: " << msg);
  CHECK(msg.find("anomaly: ") == 0);
  CHECK(msg.find(" of '") != std::string::npos);  // "forward of 'matmul' with inputs ..."
  CHECK(msg.find("produced NaN or Inf") != std::string::npos);
}
