// test_run_folder.cpp: everyday mistakes with run folders, through the real CLI (issue #18).
// Each one used to lose or silently change a run; each must now give one clear line and leave the
// run as it was, or do the right thing:
//
//   two trainings (or a training and a resume) in one folder    the second is refused, naming the pid
//   a fresh run into a folder of the user's                     refused, nothing touched
//   overwrite of a run                                          only the run's own files go
//   resume of a finished run / with fewer steps                 "finished" / refused; nothing touched
//   resume with more steps                                      continues to the new end
//   resume with --set output.run_dir=OTHER                      refused
//   resume after config.json was edited, with another run's     refused, naming the difference
//     checkpoint, or with the training text replaced
//   sample after the training text moved                        works (the run folder suffices)
//   eval after the training text moved                          one line saying the text is needed
//   eval after the training text was replaced                    refused, as a resume is
//   a FIFO or a device as data.path                             refused at once (no hang)
//   sampling a very long text                                   streams, and Ctrl-C stops it
//   token caches                                                never beside the user's text
//   sampling a byte-level BPE model on Chinese text             valid UTF-8, however tokens cut characters
#include <doctest/doctest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "data/sha256.h"
#include "data/utf8.h"
#include "tests/bad_inputs/cli_runner.h"
#include "tests/fault/fault_util.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using sf::test::CliResult;
using sf::test::lines_of;
using sf::test::run_cli;
using sf::test::TempDir;
using sf::test::train_args;
using sf::test::train_losses;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every file under `dir` with its bytes: to show that a refused command touched nothing. (The lock
// file is not data: each process that takes the lock writes its pid into it.)
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != ".lock")
      files[fs::relative(e.path(), dir).string()] = slurp(e.path());
  return files;
}

// A refusal: exit code 2 and exactly one line "error: ...", holding `text`.
void check_refused(const CliResult& r, const std::string& text) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  auto lines = lines_of(r.err);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].rfind("error: ", 0) == 0);
  CHECK(lines[0].find(text) != std::string::npos);
}

// A finished tiny run (40 steps) in `run`.
void train_tiny(const fs::path& run, std::vector<std::string> extra = {}) {
  CliResult r = run_cli(train_args(run, std::move(extra)), 300);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
}

// Waits (at most 60 s) until `p` exists.
bool wait_for(const fs::path& p) {
  for (int i = 0; i < 600; ++i) {
    if (fs::exists(p)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// A config training a char model on the text file `text` into `run`.
fs::path write_text_config(const fs::path& dir, const fs::path& text, const fs::path& run) {
  json c = json::parse(slurp(sf::test::kTiny));
  c["data"] = {
      {"dataset", "text"}, {"path", text.string()}, {"tokenizer", "char"}, {"cache_dir", (dir / "cache").string()}};
  c["train"]["steps"] = 6;
  c["train"]["eval_interval"] = 3;
  c["schedule"]["warmup_steps"] = 2;
  c["output"]["run_dir"] = run.string();
  fs::path p = dir / "text.json";
  std::ofstream(p) << c.dump(2);
  return p;
}

// Some text: the same characters in another order give other tokens with the same vocabulary.
std::string some_text(bool shuffled) {
  std::string line =
      shuffled ? "the fox jumps over a lazy dog quick brown\n" : "a quick brown fox jumps over the lazy dog\n";
  std::string text;
  for (int i = 0; i < 300; ++i) text += line;
  return text;
}

}  // namespace

TEST_CASE("two processes in one run folder: the second is refused with the first one's pid") {
  TempDir tmp("lock");
  fs::path run = tmp.path / "run";
  int out_fd, err_fd;
  pid_t first = sf::test::spawn_cli(train_args(run, {"--set", "train.steps=100000", "--set",
                                                     "schedule.name=\"constant\"", "--set", "schedule.warmup_steps=0"}),
                                    out_fd, err_fd);
  REQUIRE(first > 0);
  REQUIRE(wait_for(run / "metrics.jsonl"));
  const std::string pid = "(pid " + std::to_string(first) + ")";
  // A second training (with overwrite or without), and a resume: all refused while the first one
  // runs, and the fresh ones are told so, not advised to resume or overwrite.
  check_refused(run_cli(train_args(run, {"--set", "output.overwrite=true"}), 120),
                "is in use by another scratchformer process " + pid);
  check_refused(run_cli(train_args(run), 120), "is in use by another scratchformer process " + pid);
  REQUIRE(wait_for(run / "checkpoints" / "last.json"));
  check_refused(run_cli({"train", "--resume", run.string()}, 120), "is in use by another scratchformer process " + pid);
  // The first run was not disturbed: SIGTERM stops it cleanly, and its metrics hold one run.
  ::kill(first, SIGTERM);
  CliResult r = sf::test::collect(first, out_fd, err_fd, 120);
  INFO("first run stderr: " << r.err);
  CHECK(r.exit_code == 128 + SIGTERM);
  auto rows = train_losses(run);
  REQUIRE(!rows.empty());
  for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i].first == static_cast<int64_t>(i) + 1);  // no interleaving
  // Once it has ended, the folder is free again: a resume is accepted.
  CliResult resumed =
      run_cli({"train", "--resume", run.string(), "--set", "train.steps=" + std::to_string(rows.size() + 1)}, 120);
  INFO("resume stderr: " << resumed.err);
  CHECK(resumed.exit_code == 0);
}

TEST_CASE("a fresh run goes only into a new, empty or run folder, and overwrite removes only the run's files") {
  TempDir tmp("recognise");
  fs::path mine = tmp.path / "my_folder";
  fs::create_directories(mine);
  for (const char* f : {"metrics.csv", "summary.json", "loss.png", "tokenizer.json", "notes.txt"})
    std::ofstream(mine / f) << "the user's own " << f;
  auto before = snapshot(mine);
  check_refused(run_cli(train_args(mine), 120), "is not empty and is not a scratchformer run");
  check_refused(run_cli(train_args(mine, {"--set", "output.overwrite=true"}), 120), "is not a scratchformer run");
  CHECK(snapshot(mine) == before);

  fs::path empty = tmp.path / "empty";
  fs::create_directories(empty);
  train_tiny(empty);
  CHECK(fs::exists(empty / "run.json"));

  std::ofstream(empty / "notes.txt") << "kept";
  check_refused(run_cli(train_args(empty), 120), "already holds a run");
  train_tiny(empty, {"--set", "output.overwrite=true"});
  CHECK(slurp(empty / "notes.txt") == "kept");
  CHECK(train_losses(empty).size() == 40);
}

// A run killed while it wrote its first run.json leaves the lock and the atomic write's temporary
// (run.json.tmp.<pid>): that folder is still ours, and a fresh run goes into it and clears the
// leftover (the kill -9 test met it on a fresh clone). A name that only looks like one
// (not our file's, or not a pid after ".tmp.") is still the user's.
TEST_CASE("a folder a kill left while run.json was being written takes a fresh run, and look-alikes do not") {
  TempDir tmp("leftover");
  fs::path killed = tmp.path / "killed";
  fs::create_directories(killed);
  std::ofstream(killed / ".lock") << "12345\n";
  std::ofstream(killed / "run.json.tmp.12345") << "{\"format\": \"scratchf";
  std::ofstream(killed / "summary.json.tmp.777") << "{";
  train_tiny(killed);
  CHECK(fs::exists(killed / "run.json"));
  CHECK_FALSE(fs::exists(killed / "run.json.tmp.12345"));
  CHECK_FALSE(fs::exists(killed / "summary.json.tmp.777"));
  CHECK(train_losses(killed).size() == 40);

  int folder = 0;
  for (const char* name : {"run.json.tmp.12a", "notes.txt.tmp.12345", "run.json.tmp."}) {
    fs::path theirs = tmp.path / ("theirs_" + std::to_string(folder++));
    fs::create_directories(theirs);
    std::ofstream(theirs / name) << "the user's";
    const auto before = snapshot(theirs);
    INFO("file " << name);
    check_refused(run_cli(train_args(theirs, {"--set", "output.overwrite=true"}), 120), "is not a scratchformer run");
    CHECK(snapshot(theirs) == before);
  }
}

TEST_CASE("resuming a finished run says so, refuses fewer steps, continues to more, and changes nothing else") {
  TempDir tmp("finished");
  fs::path run = tmp.path / "run";
  train_tiny(run);
  auto before = snapshot(run);

  CliResult same = run_cli({"train", "--resume", run.string()}, 120);
  INFO("stderr: " << same.err);
  CHECK(same.exit_code == 0);
  CHECK(same.out.find("is finished (step 40/40)") != std::string::npos);
  CHECK(snapshot(run) == before);

  check_refused(run_cli({"train", "--resume", run.string(), "--set", "train.steps=30"}, 120),
                "train.steps: 30 is below the step " + run.string() + " has reached (40)");
  CHECK(snapshot(run) == before);

  fs::path other = tmp.path / "other";
  check_refused(run_cli({"train", "--resume", run.string(), "--set", "output.run_dir=" + other.string()}, 120),
                "output.run_dir: --resume continues " + run.string() + " where it is");
  CHECK(!fs::exists(other));
  CHECK(snapshot(run) == before);

  CliResult more = run_cli({"train", "--resume", run.string(), "--set", "train.steps=50"}, 300);
  INFO("stderr: " << more.err);
  CHECK(more.exit_code == 0);
  auto rows = train_losses(run);
  REQUIRE(rows.size() == 50);
  CHECK(rows.back().first == 50);
  json summary = json::parse(slurp(run / "summary.json"));
  CHECK(summary["steps"] == 50);
  CHECK(summary["val_loss"].get<double>() > 0);
  CHECK(json::parse(slurp(run / "config.json"))["train"]["steps"] == 50);  // config.json says what the run is now
}

TEST_CASE("resume verifies what it continues: an edited config.json, another run's checkpoints") {
  TempDir tmp("verify");
  fs::path run = tmp.path / "run", twin = tmp.path / "twin";
  train_tiny(run, {"--set", "train.steps=20"});
  train_tiny(twin, {"--set", "train.steps=20"});

  // The refusal names where the new value came from: --set, the config given, or an edited config.json.
  const std::string differs = "optim.lr: differs from the run being resumed (0.01 in " +
                              (run / "checkpoints" / "last.json").string() + ", now 0.02";
  auto before = snapshot(run);
  check_refused(run_cli({"train", "--resume", run.string(), "--set", "train.steps=30", "--set", "optim.lr=0.02"}, 120),
                differs + " from --set optim.lr=0.02); a resumed run keeps its config except train.steps, ");
  check_refused(run_cli({"train", "--resume", run.string(), "--set", "optim.lr=0.02"}, 120),
                "train.reference_val_loss, output.*, schedule.decay_steps, train.grad_accum_steps and description");
  json cfg = json::parse(slurp(run / "config.json"));
  cfg["optim"]["lr"] = 0.02;
  const fs::path given = tmp.path / "given.json";
  std::ofstream(given) << cfg.dump(2);
  check_refused(run_cli({"train", given.string(), "--resume", run.string(), "--set", "train.steps=30"}, 120),
                differs + " in " + given.string() + ")");
  CHECK(snapshot(run) == before);
  std::ofstream(run / "config.json") << cfg.dump(2);
  before = snapshot(run);
  check_refused(run_cli({"train", "--resume", run.string(), "--set", "train.steps=30"}, 120),
                differs + " in " + (run / "config.json").string() + "; was it edited?)");
  CHECK(snapshot(run) == before);

  // The same config trained twice is two runs: one's checkpoint does not continue the other.
  fs::remove_all(twin / "checkpoints");
  fs::copy(tmp.path / "run" / "checkpoints", twin / "checkpoints");
  fs::copy_file(run / "config.json", twin / "config.json", fs::copy_options::overwrite_existing);
  check_refused(run_cli({"train", "--resume", twin.string(), "--set", "train.steps=30"}, 120),
                "belongs to another run");
}

// A checkpoint whose data state holds a count written as a float (1e30, which nlohmann would cast
// to int64: undefined), a negative seed, or a generator word written as a float: resume refuses it
// in one line naming the field, before it writes anything to the run folder.
TEST_CASE("resume refuses a data state with counts that are not integers, and writes nothing") {
  TempDir tmp("bad_data_state");
  fs::path run = tmp.path / "run";
  train_tiny(run, {"--set", "train.steps=10"});
  const fs::path record_path = run / "checkpoints" / "last.json";
  const json good = json::parse(slurp(record_path));
  auto write_record = [&](json record) {  // with its checksum made right, so that only the field is wrong
    record.erase("record_sha256");
    record["record_sha256"] = sf::data::sha256_hex(record.dump(1));
    std::ofstream(record_path) << record.dump(1);
  };
  for (auto [field, value, message] :
       {std::tuple{"batches", json(1e30), "data state in checkpoint: \"batches\": must be a 64-bit integer, got 1e+30"},
        std::tuple{"seed", json(-3), "data state in checkpoint: \"seed\": must be an integer >= 0, got -3"}}) {
    json record = good;
    record["data"]["train_windows"][field] = value;
    write_record(record);
    const auto before = snapshot(run);
    CAPTURE(std::string(field));
    check_refused(run_cli({"train", "--resume", run.string(), "--set", "train.steps=12"}, 120), message);
    CHECK(snapshot(run) == before);  // config.json not rewritten with train.steps 12
  }
  json record = good;
  record["data"]["dropout_rng"][0] = 5.37e19;
  write_record(record);
  check_refused(run_cli({"train", "--resume", run.string(), "--set", "train.steps=12"}, 120),
                "data state: dropout_rng: a generator state must be an array of 4 unsigned integers");
  write_record(good);  // the run as it was resumes
  CliResult ok = run_cli({"train", "--resume", run.string(), "--set", "train.steps=12"}, 300);
  INFO("stderr: " << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(train_losses(run).size() == 12);
}

// A resume used to need RUN/config.json even with the config given on the command line, and
// without a config it only said "not a run directory", though the checkpoint records its config.
TEST_CASE("resume without config.json: with the config given, or from the config the checkpoint records") {
  TempDir tmp("no_config_json");
  fs::path run = tmp.path / "run";
  train_tiny(run, {"--set", "train.steps=10"});
  fs::remove(run / "config.json");
  CliResult given = run_cli({"train", sf::test::kTiny, "--resume", run.string(), "--set", "train.steps=12"}, 300);
  INFO("stderr: " << given.err);
  CHECK(given.exit_code == 0);
  CHECK(train_losses(run).size() == 12);

  fs::remove(run / "config.json");
  CliResult recorded = run_cli({"train", "--resume", run.string(), "--set", "train.steps=14"}, 300);
  INFO("stderr: " << recorded.err);
  CHECK(recorded.exit_code == 0);
  CHECK(recorded.err.find("config.json is missing; resuming with the config recorded in") != std::string::npos);
  CHECK(train_losses(run).size() == 14);
  CHECK(json::parse(slurp(run / "config.json"))["train"]["steps"] == 14);  // written again

  // The recorded config is the record's: an error in it names the record, not a config file.
  fs::remove(run / "config.json");
  const fs::path last = run / "checkpoints" / "last.json";
  json record = json::parse(slurp(last));
  record.erase("record_sha256");
  record["config"]["model"]["n_layers"] = 2;  // a key scratchformer does not know
  std::ofstream(last) << record.dump(1);
  CliResult bad = run_cli({"train", "--resume", run.string(), "--set", "train.steps=16"}, 60);
  INFO("stderr: " << bad.err);
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find(last.string() + ": its config: model.n_layers") != std::string::npos);
}

TEST_CASE("a run on a text file: the text replaced or moved, its token cache, sample and eval without it") {
  TempDir tmp("text");
  fs::path text = tmp.path / "corpus" / "story.txt", run = tmp.path / "run";
  fs::create_directories(text.parent_path());
  std::ofstream(text) << some_text(false);
  fs::path config = write_text_config(tmp.path, text, run);
  CliResult r = run_cli({"train", config.string()}, 300);
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  // The token cache went to the cache folder, not beside the text.
  for (const auto& e : fs::directory_iterator(text.parent_path()))
    CHECK_MESSAGE(e.path() == text, "left beside the user's text: " << e.path());
  CHECK(!fs::is_empty(tmp.path / "cache" / "tokens"));

  // Replaced by another text with the same characters: resume and eval refused, naming the data.
  std::ofstream(text) << some_text(true);
  check_refused(run_cli({"train", "--resume", run.string(), "--set", "train.steps=9"}, 120),
                "data: the training tokens differ from those " + run.string() + " was trained on");
  check_refused(run_cli({"eval", run.string()}, 120),
                "data: the training tokens differ from those " + run.string() + " was trained on");
  check_refused(run_cli({"eval", run.string()}, 120),
                "eval scores the val split of the text the run was trained on "
                "(data.path = \"" +
                    text.string() + "\")");

  // Moved away: the run still samples (from any working folder), and eval says what it needs.
  fs::rename(text, tmp.path / "moved.txt");
  CliResult s = run_cli({"sample", run.string(), "--max-new-tokens", "40", "--seed", "1"}, 120);
  INFO("sample stderr: " << s.err);
  CHECK(s.exit_code == 0);
  CHECK(s.out.size() >= 40);  // the prompt, 40 characters, a newline
  CHECK(s.err.rfind((run / "checkpoints" / "last.json").string() + " (step 6)\n", 0) == 0);  // which checkpoint
  // A leading zero is still base 10: "040" is 40 tokens (CLI11 alone reads it as octal, 32).
  CliResult zero = run_cli({"sample", run.string(), "--max-new-tokens", "040", "--seed", "1"}, 120);
  CHECK(zero.exit_code == 0);
  CHECK(zero.out == s.out);
  check_refused(run_cli({"eval", run.string()}, 120), "eval: scoring the val split needs the run's training text");
}

TEST_CASE("a named pipe or a device as data.path is refused at once, naming what it is") {
  TempDir tmp("fifo");
  fs::path fifo = tmp.path / "pipe.txt";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  for (auto [path, kind] :
       {std::pair<std::string, std::string>{fifo.string(), "is a named pipe (FIFO), expected a regular file"},
        {"/dev/zero", "is a character device, expected a regular file"}}) {
    fs::path config = write_text_config(tmp.path, path, tmp.path / "run");
    CliResult r = run_cli({"train", config.string()}, 30);
    CHECK(!r.timed_out);
    check_refused(r, path + ": " + kind);
    CHECK(!fs::exists(tmp.path / "run"));
  }
}

TEST_CASE("sample streams its text as it is drawn, and Ctrl-C stops it") {
  TempDir tmp("stream");
  fs::path run = tmp.path / "run";
  train_tiny(run, {"--set", "train.steps=4", "--set", "schedule.warmup_steps=1"});
  int out_fd, err_fd;
  pid_t pid = sf::test::spawn_cli({"sample", run.string(), "--max-new-tokens", "1000000000"}, out_fd, err_fd);
  REQUIRE(pid > 0);
  // Text arrives long before a billion tokens could be drawn: it is streamed.
  std::string early;
  char buf[4096];
  for (int i = 0; i < 600 && early.size() < 200; ++i) {
    pollfd p{out_fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      ssize_t n = ::read(out_fd, buf, sizeof buf);
      if (n <= 0) break;
      early.append(buf, static_cast<size_t>(n));
    }
  }
  CHECK(early.size() >= 200);
  ::kill(pid, SIGINT);
  CliResult r = sf::test::collect(pid, out_fd, err_fd, 60);
  CHECK(!r.timed_out);
  CHECK(r.exit_code == 128 + SIGINT);
  CHECK(r.err.find("(stopped)") != std::string::npos);
}

TEST_CASE("SIGTERM while the data loads ends the process at once, with no run folder") {
  TempDir tmp("sigterm_load");
  // 10 MB of random words and a BPE vocabulary of 20000 to learn from them: about 10 s of
  // loading on an idle machine (measured), far longer than the 1 s before the signal.
  fs::path text = tmp.path / "big.txt", run = tmp.path / "run";
  {
    std::string words;
    uint64_t x = 1;
    for (int i = 0; i < 1'500'000; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      for (uint64_t k = 0, n = 2 + (x >> 61); k < n; ++k) words += static_cast<char>('a' + (x >> (5 * k + 3)) % 26);
      words += ' ';
    }
    std::ofstream(text) << words;
  }
  fs::path config = write_text_config(tmp.path, text, run);
  int out_fd, err_fd;
  pid_t pid = sf::test::spawn_cli(
      {"train", config.string(), "--set", "data.tokenizer=\"bpe\"", "--set", "data.bpe_vocab_size=20000"}, out_fd,
      err_fd);
  REQUIRE(pid > 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  CliResult r = sf::test::collect(pid, out_fd, err_fd, 60);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(sf::test::seconds_since(t0) < 10);
  CHECK(r.exit_code == 128 + SIGTERM);
  CHECK(!fs::exists(run));  // it was still loading: nothing was written
}

TEST_CASE("sampling a byte-level BPE model with --raw-bytes still prints only valid UTF-8") {
  TempDir tmp("bpe_zh");
  // Random lines of characters from Tang poems: 3 bytes each in UTF-8, so byte-level BPE tokens
  // that end inside a character are common, and a barely trained model samples them freely.
  const std::vector<std::string> chars = {"春", "眠", "不", "觉", "晓", "处", "闻", "啼", "鸟", "夜", "来", "风",
                                          "雨", "声", "花", "落", "知", "多", "少", "床", "前", "明", "月", "光"};
  std::string text;
  uint64_t x = 7;
  for (int line = 0; line < 400; ++line) {
    for (int k = 0; k < 10; ++k) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      text += chars[(x >> 33) % chars.size()];
    }
    text += line % 2 ? "。\n" : "，";
  }
  fs::path corpus = tmp.path / "poems.txt", run = tmp.path / "run";
  std::ofstream(corpus) << text;
  fs::path config = write_text_config(tmp.path, corpus, run);
  CliResult r =
      run_cli({"train", config.string(), "--set", "data.tokenizer=\"bpe\"", "--set", "data.bpe_vocab_size=300"}, 300);
  INFO("train stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  int cut = 0, replaced = 0;
  for (int seed = 1; seed <= 5; ++seed) {
    // --raw-bytes: the sampler's whole-character rule off, so the stream itself meets byte
    // tokens that fit no character (tests/nn/test_sampling_utf8.cpp checks the rule).
    CliResult s = run_cli({"sample", run.string(), "--max-new-tokens", "200", "--temperature", "2", "--seed",
                           std::to_string(seed), "--prompt", "春", "--raw-bytes"},
                          120);
    INFO("seed " << seed << ", stderr: " << s.err);
    REQUIRE(s.exit_code == 0);
    CHECK(sf::data::utf8_first_error(s.out) < 0);
    CHECK(s.out.rfind("春", 0) == 0);
    cut += s.err.find("ended inside a multi-byte character") != std::string::npos;
    replaced += s.out.find("\xEF\xBF\xBD") != std::string::npos;
  }
  // Barely trained, at temperature 2, the model draws byte tokens that fit no character: the
  // test did meet invalid byte sequences (shown as U+FFFD), not only well-formed ones.
  CHECK(replaced > 0);
  MESSAGE(cut << " of 5 samples ended inside a character, " << replaced << " held bytes that fit no character");
}
