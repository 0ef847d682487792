// test_bad_inputs.cpp: every file in tests/bad_inputs/ given to scratchformer the way a learner
// would, and the exact error each must give (the table is cases.txt).
//
//   train   <config.json>      `scratchformer train FILE --set output.run_dir=<tmp>`: exit code 2,
//                              exactly one line on stderr, "error: " + the expected text in it,
//                              and no run directory left behind
//   cli     <arguments...>     the same checks for any command line (no run_dir added)
//   weights <file>             nn's safetensors reader: a CheckpointError with the expected text
//   tokenizer <file>           data's tokenizer.json loader: a DataError with the expected text
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "autograd/errors.h"
#include "data/tokenizer.h"
#include "nn/safetensors.h"
#include "tests/bad_inputs/cli_runner.h"

namespace fs = std::filesystem;
using sf::test::run_cli;

namespace {

struct Case {
  int line = 0;
  std::string kind, input, expected;
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// cases.txt: "kind | input | expected message", '#' starts a comment line.
std::vector<Case> read_cases(const std::string& kind) {
  std::ifstream in(std::string(SF_SOURCE_DIR) + "/tests/bad_inputs/cases.txt");
  REQUIRE(in);
  std::vector<Case> cases;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    size_t a = line.find(" | "), b = a == std::string::npos ? a : line.find(" | ", a + 3);
    REQUIRE_MESSAGE(b != std::string::npos, "cases.txt:" << n << ": expected 'kind | input | message'");
    Case c{n, trim(line.substr(0, a)), trim(line.substr(a + 3, b - a - 3)), trim(line.substr(b + 3))};
    if (c.kind == kind) cases.push_back(c);
  }
  REQUIRE_MESSAGE(!cases.empty(), "no '" << kind << "' cases in cases.txt");
  return cases;
}

// One argument with its escapes decoded: \n, \t, \\ and \xHH (any byte, e.g. invalid UTF-8).
std::string unescape(const std::string& a) {
  std::string out;
  for (size_t i = 0; i < a.size(); ++i) {
    char next = i + 1 < a.size() ? a[i + 1] : '\0';
    if (a[i] != '\\' || next == '\0') {
      out += a[i];
      continue;
    }
    bool hex = next == 'x' && i + 3 < a.size() && std::isxdigit(static_cast<unsigned char>(a[i + 2])) &&
               std::isxdigit(static_cast<unsigned char>(a[i + 3]));
    if (hex) {
      out += static_cast<char>(std::stoi(a.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += next == 'n' ? '\n' : next == 't' ? '\t' : next;  // "\\" stands for one backslash
      i += 1;
    }
  }
  return out;
}

// The input column split at spaces, each word unescaped.
std::vector<std::string> split_args(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> args;
  for (std::string a; in >> a;) args.push_back(unescape(a));
  return args;
}

// The checks every CLI case shares: code 2, one line, "error: ..." holding the expected text.
void check_cli_error(const Case& c, const std::vector<std::string>& args) {
  sf::test::CliResult r = run_cli(args, 120);
  INFO("cases.txt:" << c.line << ": scratchformer " << c.input);
  INFO("stderr: " << r.err);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  auto lines = sf::test::lines_of(r.err);
  CHECK(lines.size() == 1);
  CHECK(r.err.rfind("error: ", 0) == 0);
  CHECK(r.err.find(c.expected) != std::string::npos);
}

template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) { return e.what(); }
  return "(no error of the expected type)";
}

}  // namespace

TEST_CASE("bad configs and data files: scratchformer train exits with code 2 and one clear line") {
  REQUIRE_MESSAGE(fs::exists(sf::test::cli_path()), "build scratchformer first: " << sf::test::cli_path());
  fs::path run_dir = fs::temp_directory_path() / ("sf_bad_inputs_run_" + std::to_string(::getpid()));
  fs::remove_all(run_dir);
  for (const Case& c : read_cases("train")) {
    auto args = split_args(c.input);
    args.insert(args.begin(), "train");
    args.push_back("--set");
    args.push_back("output.run_dir=" + run_dir.string());
    check_cli_error(c, args);
    INFO("cases.txt:" << c.line << ": a config that fails must leave no run directory");
    CHECK_FALSE(fs::exists(run_dir));
    fs::remove_all(run_dir);
  }
}

TEST_CASE("bad command lines: exit code 2 and one clear line") {
  REQUIRE_MESSAGE(fs::exists(sf::test::cli_path()), "build scratchformer first: " << sf::test::cli_path());
  for (const Case& c : read_cases("cli")) check_cli_error(c, split_args(c.input));
}

TEST_CASE("bad safetensors files: one CheckpointError naming the file and the problem") {
  for (const Case& c : read_cases("weights")) {
    INFO("cases.txt:" << c.line << ": " << c.input);
    std::string msg = error_of<sf::CheckpointError>([&] { sf::load_safetensors(c.input); });
    INFO("message: " << msg);
    CHECK(msg.find(c.expected) != std::string::npos);
    CHECK(msg.rfind(c.input, 0) == 0);  // starts with the file name
    CHECK(msg.find('\n') == std::string::npos);
    // The header-only reader refuses the same files (except those whose header is fine).
    if (c.expected.find("cannot be loaded") == std::string::npos)
      CHECK(error_of<sf::CheckpointError>([&] { sf::read_safetensors_header(c.input); }).find(c.expected) !=
            std::string::npos);
  }
}

TEST_CASE("bad tokenizer files: one DataError naming the file and the problem") {
  for (const Case& c : read_cases("tokenizer")) {
    INFO("cases.txt:" << c.line << ": " << c.input);
    std::string msg = error_of<sf::DataError>([&] { sf::data::load_tokenizer(c.input); });
    INFO("message: " << msg);
    CHECK(msg.find(c.expected) != std::string::npos);
    CHECK(msg.find(c.input) != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("the intact checkpoint the bad ones are made from evaluates") {
  REQUIRE_MESSAGE(fs::exists(sf::test::cli_path()), "build scratchformer first: " << sf::test::cli_path());
  sf::test::CliResult r = run_cli({"eval", "tests/bad_inputs/checkpoint/good/last.json"}, 120);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("(step 2)") != std::string::npos);
}

// A text file that is one huge line (no newline in 4 MB) is ordinary text: it must train with
// either tokenizer, in bounded time. Written here rather than committed, for its size.
TEST_CASE("a huge-line text file trains with the char and the bpe tokenizer") {
  REQUIRE_MESSAGE(fs::exists(sf::test::cli_path()), "build scratchformer first: " << sf::test::cli_path());
  fs::path tmp = fs::temp_directory_path() / ("sf_bad_inputs_huge_" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  std::string line;
  for (int i = 0; line.size() < (4u << 20); ++i) line += "word" + std::to_string(i % 1000) + (i % 7 ? " " : ", ");
  std::ofstream(tmp / "huge_line.txt", std::ios::binary) << line;
  for (std::string tokenizer : {"char", "bpe"}) {
    INFO("tokenizer " << tokenizer);
    sf::test::CliResult r = run_cli({"train", "tests/fault/tiny.json",
                                     "--set", "data.dataset=\"text\"",
                                     "--set", "data.path=" + (tmp / "huge_line.txt").string(),
                                     "--set", "data.tokenizer=\"" + tokenizer + "\"",
                                     "--set", "data.bpe_vocab_size=300",
                                     "--set", "data.cache_dir=" + (tmp / "cache").string(),
                                     "--set", "train.steps=2",
                                     "--set", "schedule.warmup_steps=0",
                                     "--set", "train.eval_interval=2",
                                     "--set", "train.eval_iters=1",
                                     "--set", "output.run_dir=" + (tmp / ("run_" + tokenizer)).string()},
                                    300);
    INFO("stderr: " << r.err);
    CHECK_FALSE(r.timed_out);
    CHECK(r.exit_code == 0);
  }
  fs::remove_all(tmp);
}
