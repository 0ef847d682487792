// The training loop end to end on tiny configs: it learns, it is deterministic, it resumes bit
// for bit, checkpoints detect damage, failing configs leave nothing behind, and fp16/bf16 runs
// end near the fp32 run.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "experiments/checkpoint.h"
#include "experiments/config.h"
#include "experiments/metrics.h"
#include "experiments/task.h"
#include "experiments/train.h"

using namespace sf;
using json = nlohmann::json;
namespace fs = std::filesystem;

// A small corpus with structure a tiny model can learn quickly: words from a short list.
static std::string tiny_corpus_path() {
  fs::path p = fs::temp_directory_path() / "sf_test_experiments" / "corpus.txt";
  if (!fs::exists(p)) {
    fs::create_directories(p.parent_path());
    const char* words[] = {"the cat sat. ", "a dog ran! ", "we see it? ", "to be or not. ", "all is well. "};
    std::ostringstream text;
    uint64_t x = 12345;
    for (int i = 0; i < 3000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      text << words[(x >> 33) % 5];
    }
    std::ofstream(p) << text.str();
  }
  return p.string();
}

static Config tiny_config(const std::string& run_name) {
  Config c;
  c.data.dataset = "text";
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
  c.output.run_dir = (fs::temp_directory_path() / "sf_test_experiments" / run_name).string();
  c.output.overwrite = true;
  c.output.plot = false;
  validate_config(c);
  return c;
}

static TrainResult quiet_train(const Config& c, TrainOptions o = {}) {
  std::ostringstream log;
  o.out = &log;
  return train(c, o);
}

TEST_CASE("a tiny GPT learns: the loss falls well below its starting value") {
  Config c = tiny_config("learns");
  c.train.steps = 60;
  TrainResult r = quiet_train(c);
  REQUIRE(r.losses.size() == 60);
  CHECK(r.losses.front() > 2.5);                     // about ln(vocab) at the start
  CHECK(r.val_loss < 0.6 * r.losses.front());
  // The run directory has the resolved config, the metrics and the checkpoints.
  fs::path dir = c.output.run_dir;
  json saved = json::parse(std::ifstream(dir / "config.json"));
  CHECK(saved == config_to_json(c));
  CHECK(read_metrics((dir / "metrics.jsonl").string()).size() == 60 + 7);  // 60 steps + evals at 0,10,..,60
  CHECK(fs::exists(dir / "metrics.csv"));
  CHECK(fs::exists(dir / "checkpoints" / "last.json"));
  CHECK(fs::exists(dir / "checkpoints" / "best.json"));
  CHECK(fs::exists(dir / "summary.json"));
}

TEST_CASE("same config and seed give the same losses bit for bit, another seed does not") {
  Config c = tiny_config("determinism");
  c.train.steps = 20;
  c.model.dropout = 0.1;  // the dropout generator is part of what must repeat
  TrainResult a = quiet_train(c), b = quiet_train(c);
  CHECK(a.losses == b.losses);
  c.train.seed = 7;
  TrainResult other = quiet_train(c);
  CHECK(other.losses != a.losses);
}

TEST_CASE("a run stopped at step k and resumed gives the uninterrupted run's losses bit for bit") {
  Config c = tiny_config("resume");
  c.model.dropout = 0.1;
  c.output.checkpoint_interval = 5;
  TrainResult full = quiet_train(c);

  TrainOptions stop;
  stop.stop_after = 15;
  TrainResult first = quiet_train(c, stop);
  REQUIRE(first.losses.size() == 15);
  TrainOptions resume;
  resume.resume = true;
  TrainResult rest = quiet_train(c, resume);
  CHECK(rest.first_step == 15);
  std::vector<double> joined = first.losses;
  joined.insert(joined.end(), rest.losses.begin(), rest.losses.end());
  CHECK(joined == full.losses);
  CHECK(rest.val_loss == full.val_loss);
  // metrics.jsonl holds each step once, with the uninterrupted run's losses.
  std::vector<double> logged;
  for (const json& row : read_metrics((fs::path(c.output.run_dir) / "metrics.jsonl").string()))
    if (row["kind"] == "train") logged.push_back(row["loss"].get<double>());
  CHECK(logged == full.losses);
}

TEST_CASE("kill -9 in the middle of a run, then --resume: same losses as the uninterrupted run") {
  std::string exe = std::string(SF_BINARY_DIR) + "/scratchformer";
  if (!fs::exists(exe)) {
    MESSAGE("skipped: " << exe << " is not built");
    return;
  }
  Config c = tiny_config("kill9");
  c.train.steps = 5000;  // long enough that the kill lands mid-run
  c.train.eval_interval = 1000;
  c.output.checkpoint_interval = 4;

  fs::remove_all(c.output.run_dir);  // the poll below must only see the spawned run's checkpoints
  fs::path cfg = fs::path(c.output.run_dir).parent_path() / "kill9.json";
  std::ofstream(cfg) << config_to_json(c).dump();
  pid_t pid;
  std::string cfg_s = cfg.string();
  char* argv[] = {const_cast<char*>(exe.c_str()), const_cast<char*>("train"), cfg_s.data(), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  REQUIRE(posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, environ) == 0);
  // Kill it once a checkpoint past step 8 exists (whatever it is doing at that moment).
  std::string record = checkpoint_record_path(c.output.run_dir, "last");
  for (int i = 0; i < 2000; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    json r = json::parse(std::ifstream(record), nullptr, false);
    if (!r.is_discarded() && r.value("step", 0) >= 8) break;
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&fa);
  CHECK(WIFSIGNALED(status));

  // Wherever the kill landed (a slow or busy machine may let the child run far), resume for 40
  // more steps, then compare with an uninterrupted run of the same length.
  int64_t killed_at = json::parse(std::ifstream(record), nullptr, false).value("step", 0);
  TrainOptions resume;
  resume.resume = true;
  resume.stop_after = killed_at + 40;
  TrainResult rest = quiet_train(c, resume);
  CHECK(rest.first_step >= 8);
  CHECK(rest.first_step == killed_at);
  REQUIRE(rest.first_step < c.train.steps);

  fs::remove_all(c.output.run_dir);
  TrainOptions uninterrupted;
  uninterrupted.stop_after = killed_at + 40;
  TrainResult full = quiet_train(c, uninterrupted);
  REQUIRE(full.losses.size() == static_cast<size_t>(killed_at + 40));
  std::vector<double> tail(full.losses.begin() + rest.first_step, full.losses.end());
  CHECK(rest.losses == tail);
}

TEST_CASE("a truncated or corrupt checkpoint is named, the other checkpoint is untouched") {
  Config c = tiny_config("corrupt");
  c.train.steps = 20;
  quiet_train(c);
  std::string last = checkpoint_record_path(c.output.run_dir, "last");
  std::string best = checkpoint_record_path(c.output.run_dir, "best");
  json record = read_checkpoint_record(last);
  fs::path weights = fs::path(last).parent_path() / record["files"]["weights"]["path"].get<std::string>();

  // Flip one byte: same size, different hash.
  {
    std::fstream f(weights, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(100);
    char ch;
    f.get(ch);
    f.seekp(100);
    f.put(static_cast<char>(ch ^ 0x40));
  }
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("sha256 differs"), CheckpointError);
  // Truncate it.
  fs::resize_file(weights, fs::file_size(weights) / 2);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains(weights.filename().string().c_str()), CheckpointError);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("truncated"), CheckpointError);
  // A torn record.
  std::string text;
  { std::ifstream in(last); std::stringstream ss; ss << in.rdbuf(); text = ss.str(); }
  std::ofstream(last) << text.substr(0, text.size() / 2);
  CHECK_THROWS_WITH_AS(read_checkpoint_record(last), doctest::Contains("not a valid checkpoint record"), CheckpointError);
  // best was never touched and still loads.
  CHECK_NOTHROW(read_checkpoint_record(best));
  // Resuming from the damaged `last` is one clear error.
  TrainOptions resume;
  resume.resume = true;
  CHECK_THROWS_AS(quiet_train(c, resume), CheckpointError);
}

TEST_CASE("a config that fails leaves no run directory behind") {
  Config c = tiny_config("never_created");
  fs::remove_all(c.output.run_dir);
  c.model.block_size = 64;
  c.data.val_fraction = 0.001;  // a val split of ~33 tokens is shorter than one window: DataError
  CHECK_THROWS_AS(quiet_train(c), DataError);
  CHECK_FALSE(fs::exists(c.output.run_dir));

  Config huge = tiny_config("never_created");
  huge.model.n_layer = 200;
  huge.model.n_embd = 8192;
  huge.model.n_head = 64;
  CHECK_THROWS_WITH_AS(quiet_train(huge), doctest::Contains("parameters"), ConfigError);
  CHECK_FALSE(fs::exists(c.output.run_dir));
}

TEST_CASE("the parameter estimate made before allocation is exact") {
  for (bool bias : {true, false})
    for (bool tie : {true, false})
      for (const char* pos : {"learned", "rope"}) {
        Config c = tiny_config("estimate");
        c.model.bias = bias;
        c.model.tie_weights = tie;
        c.model.pos_encoding = pos;
        std::unique_ptr<Task> task = make_task(c);
        CHECK(estimate_model_size(c, 30).parameters > 0);
        int64_t vocab = task->tokenizer_json()["chars"].get<std::string>().size();
        CHECK(estimate_model_size(c, vocab).parameters == task->model().num_parameters());
      }
}

TEST_CASE("bf16 and fp16 (with loss scaling) runs end within a few percent of the fp32 run") {
  Config c = tiny_config("precision");
  c.train.steps = 60;
  double fp32 = quiet_train(c).val_loss;
  c.precision.dtype = "bf16";
  double bf16 = quiet_train(c).val_loss;
  c.precision.dtype = "fp16";
  TrainResult fp16 = quiet_train(c);
  CHECK(std::fabs(bf16 - fp32) / fp32 < 0.05);
  CHECK(std::fabs(fp16.val_loss - fp32) / fp32 < 0.05);
  CHECK(bf16 != fp32);  // the emulation really changed the arithmetic
}
