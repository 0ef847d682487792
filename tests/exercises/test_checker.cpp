// The checker's own machinery on code known to be wrong: value comparisons name the index and
// both values, the gradient check catches a wrong backward, a stub reads "not implemented yet",
// an exception is a failure and never a crash; and the CLI's `exercise` command end to end.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>
#include <unistd.h>

#include "autograd/errors.h"
#include "autograd/ops.h"
#include "exercises/check/checker.h"
#include "exercises/exercise.h"
#include "tests/bad_inputs/cli_runner.h"

using namespace sf;
using namespace sf::exercise;

static Tensor f64(const std::vector<double>& v, const Shape& s) { return Tensor::from_vector(v, s, DType::f64); }

TEST_CASE("compare names the first differing element, both values and how many differ") {
  Tensor want = f64({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(compare(want, want.clone()) == "");
  std::string d = compare(want, f64({1, 2, 3, 4, 0.5, 7}, {2, 3}));
  CHECK(d == "at (1, 1): expected 5, got 0.5 (2 of 6 values differ)");
  CHECK(compare(want, f64({1, 2, 3, 4, 5, 6}, {3, 2})) == "shape: expected (2, 3), got (3, 2)");
  CHECK(compare(want, Tensor()).find("undefined") != std::string::npos);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  CHECK(compare(f64({inf, nan}, {2}), f64({inf, nan}, {2})) == "");
  CHECK(compare(f64({1.0}, {1}), f64({nan}, {1})) == "at (0): expected 1, got nan (1 of 1 values differ)");
  CHECK(compare(std::vector<double>{1, 2}, std::vector<double>{1, 2.5}) ==
        "at [1]: expected 2, got 2.5 (1 of 2 values differ)");
  CHECK(compare(1.0, 1.0 + 1e-12) == "");
  CHECK(compare(1.0, 1.1) == "expected 1, got 1.1");
}

// tanh with a given backward, as the checker wraps a learner's.
static Tensor tanh_with(const Tensor& x, Tensor (*backward)(const Tensor& y, const Tensor& dy)) {
  return op_with_backward(
      {x}, [](const std::vector<Tensor>& in) { return sf::tanh(in[0]); },
      [backward](const std::vector<Tensor>&, const Tensor& y, const Tensor& dy) {
        return std::vector<Tensor>{backward(y, dy)};
      },
      {"x"});
}

TEST_CASE("the gradient check passes a right backward and names the entry of a wrong one") {
  Tensor x = random_f64({2, 3}, 1).requires_grad_();
  auto right = [](const Tensor& y, const Tensor& dy) { return dy * (1.0 - y * y); };
  auto wrong = [](const Tensor& y, const Tensor& dy) { return dy * (1.0 - y); };  // a classic slip
  auto bad_shape = [](const Tensor& y, const Tensor& dy) { return sum(dy * (1.0 - y * y), {0}); };
  CHECK(gradient_check([&](const std::vector<Tensor>& in) { return tanh_with(in[0], right); }, {x}, {"x"}) == "");
  std::string d = gradient_check([&](const std::vector<Tensor>& in) { return tanh_with(in[0], wrong); }, {x}, {"x"});
  CHECK(d.find("d out(") == 0);
  CHECK(d.find(" / d x(") != std::string::npos);
  CHECK(d.find("backward gives") != std::string::npos);
  CHECK(d.find("finite differences give") != std::string::npos);
  CHECK_THROWS_WITH_AS(
      gradient_check([&](const std::vector<Tensor>& in) { return tanh_with(in[0], bad_shape); }, {x}, {"x"}),
      "your backward returned dx of shape (3), but x is (2, 3) (a gradient has its input's shape)", CheckFailed);
  // A function that copies values out has no graph: said in words, not a gradcheck error.
  std::string detached =
      gradient_check([](const std::vector<Tensor>& in) { return sf::tanh(in[0]).detach(); }, {x}, {"x"});
  CHECK(detached.find("no gradient history") != std::string::npos);
}

TEST_CASE("a report stops at the first check that does not hold, with its hint") {
  Report ok;
  CHECK(ok.check(
      "first", [] { return std::string(); }, "h"));
  CHECK(!ok.check(
      "second", [] { return std::string("at (0): expected 1, got 2"); }, "the hint"));
  CHECK(!ok.check(
      "third", [] { return std::string(); }, "h"));  // skipped
  CHECK(ok.outcome() == Outcome::failed);
  CHECK(ok.checks_passed() == 1);
  REQUIRE(ok.lines().size() == 3);
  CHECK(ok.lines()[0] == "ok    first");
  CHECK(ok.lines()[1] == "FAIL  second: at (0): expected 1, got 2");
  CHECK(ok.lines()[2] == "      hint: the hint");

  Report stub;
  CHECK(!stub.check(
      "values", []() -> std::string { todo("f in exercises/x.cpp"); }, "h"));
  CHECK(stub.outcome() == Outcome::not_implemented);
  REQUIRE(stub.lines().size() == 1);
  CHECK(stub.lines()[0].rfind("not implemented yet: f in exercises/x.cpp", 0) == 0);

  Report threw;
  CHECK(!threw.check(
      "values", []() -> std::string { throw ShapeError("matmul: (2, 3) @ (2, 3)"); }, "h"));
  CHECK(threw.outcome() == Outcome::failed);
  CHECK(threw.lines()[0] == "FAIL  values: your code threw an error: matmul: (2, 3) @ (2, 3)");
}

TEST_CASE("exercises are found by number, anything else is refused naming the valid numbers") {
  CHECK(find_exercise("5").number == 5);
  CHECK(find_exercise("05").number == 5);
  CHECK(find_exercise("18").title == "dynamic loss scaling");
  for (const char* bad : {"0", "x", "", "-1", "5a", "1000000000000", "999"}) {
    CAPTURE(bad);
    try {
      find_exercise(bad);
      FAIL("accepted");
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      CHECK(msg.rfind("exercise '" + std::string(bad) + "': no such exercise (valid: 1 to ", 0) == 0);
      CHECK(msg.find(", or all; `exercise list` shows them)") != std::string::npos);
    }
  }
}

TEST_CASE("exercise hints come in tiers, in English and Chinese, and a bad tier is refused") {
  std::ostringstream en;
  print_hint("6", 2, en);
  CHECK(en.str().find("exercise 6: softmax backward") == 0);
  CHECK(en.str().find(std::string("tier 1, the idea: ") + hints_of(6).en[0]) != std::string::npos);
  CHECK(en.str().find(std::string("tier 2, the formula: ") + hints_of(6).en[1]) != std::string::npos);
  CHECK(en.str().find("tier 3") == std::string::npos);  // the code-level hint only when asked for
  CHECK(en.str().find("still stuck? scratchformer exercise hint 6 3") != std::string::npos);
  std::ostringstream zh;
  print_hint("12", 3, zh, /*zh=*/true);
  CHECK(zh.str().find(hints_of(12).zh[2]) != std::string::npos);
  std::ostringstream bad;
  CHECK_THROWS_WITH_AS(print_hint("6", 4, bad),
                       "exercise hint 6: tier 4 (valid: 1 the idea, 2 the formula, 3 the code-level hint)",
                       ConfigError);
}

TEST_CASE("scratchformer exercise: list, check of a stub, and a bad number") {
  using sf::test::run_cli;
  auto list = run_cli({"exercise", "list"});
  CHECK(list.exit_code == 0);
  for (const Exercise& e : all_exercises()) CHECK(list.out.find(e.title) != std::string::npos);
  CHECK(list.out.find("lesson 16 mixed-precision") != std::string::npos);

  auto bad = run_cli({"exercise", "check", "99"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.rfind("error: exercise '99': no such exercise (valid: 1 to ", 0) == 0);

  // The list marks the first exercise not done as next, with a difficulty per exercise.
  CHECK(list.out.find("<- next") != std::string::npos);
  CHECK(list.out.find("difficulty") != std::string::npos);
  auto hint = run_cli({"exercise", "hint", "1"});
  CHECK(hint.exit_code == 0);
  CHECK(hint.out.find(hints_of(1).en[0]) != std::string::npos);

  // Exercise 1 is a stub in a clean clone; a learner who has solved it sees it pass instead.
  auto one = run_cli({"exercise", "check", "1"});
  Report r = run_exercise(find_exercise("1"));
  if (r.outcome() == Outcome::not_implemented) {
    CHECK(one.exit_code == 1);
    CHECK(one.out.find("exercise 1: tanh backward (lesson 2 autograd; edit exercises/01_tanh_backward.cpp)") == 0);
    CHECK(one.out.find("not implemented yet: tanh_backward in exercises/01_tanh_backward.cpp") != std::string::npos);
  } else {
    CHECK(one.exit_code == (r.outcome() == Outcome::passed ? 0 : 1));
  }

  // `check all` ends with the counts, which add up to the number of exercises.
  auto all = run_cli({"exercise", "check", "all"});
  int counts[3] = {0, 0, 0};
  for (const Exercise& e : all_exercises()) ++counts[static_cast<int>(run_exercise(e).outcome())];
  std::string summary = std::to_string(counts[0]) + " passed, " + std::to_string(counts[1]) + " failing, " +
                        std::to_string(counts[2]) + " not implemented yet (of " +
                        std::to_string(all_exercises().size()) + ")\n";
  CHECK(all.out.size() > summary.size());
  CHECK(all.out.substr(all.out.size() - summary.size()) == summary);
  CHECK(all.exit_code == (counts[0] == static_cast<int>(all_exercises().size()) ? 0 : 1));
}

// The checks run the exercises compiled into the binary: a learner who edits exercises/01_*.cpp
// and checks without rebuilding used to get the old copy's verdict ("not implemented yet").
TEST_CASE("scratchformer exercise --lang zh: the check, the list and the summary in Chinese") {
  using sf::test::run_cli;
  auto one = run_cli({"exercise", "check", "1", "--lang", "zh"});
  if (run_exercise(find_exercise("1")).outcome() == Outcome::not_implemented) {
    CHECK(one.exit_code == 1);
    CHECK(one.out.find("练习 1：tanh 的反向传播（第 2 课 autograd；编辑 exercises/01_tanh_backward.cpp）") == 0);
    CHECK(one.out.find("尚未实现：tanh_backward") != std::string::npos);
  }
  auto list = run_cli({"exercise", "list", "--lang", "zh"});
  CHECK(list.exit_code == 0);
  CHECK(list.out.find("第 16 课 mixed-precision") != std::string::npos);
  CHECK(list.out.find("动态损失缩放") != std::string::npos);
  auto all = run_cli({"exercise", "check", "all", "--lang", "zh"});
  CHECK(all.out.find("个尚未实现（共 " + std::to_string(all_exercises().size()) + " 个）") != std::string::npos);
  auto bad = run_cli({"exercise", "check", "1", "--lang", "fr"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("exercise --lang: unknown language 'fr'") != std::string::npos);
}

TEST_CASE("scratchformer exercise check says to rebuild first when the exercise was saved after the build") {
  namespace fs = std::filesystem;
  // A copy of scratchformer dated before the exercise files (they are left untouched).
  const fs::path dir = fs::temp_directory_path() / ("sf_test_stale_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path old_binary = dir / "scratchformer";
  fs::copy_file(sf::test::cli_path(), old_binary, fs::copy_options::overwrite_existing);
  const auto edited = fs::last_write_time(std::string(SF_SOURCE_DIR) + "/exercises/01_tanh_backward.cpp");
  fs::last_write_time(old_binary, edited - std::chrono::hours(1));
  std::string out;
  FILE* p = ::popen((old_binary.string() + " exercise check 1 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(out ==
        "error: exercises/01_tanh_backward.cpp was saved after scratchformer was built, and the check runs the copy "
        "compiled into it; rebuild first: cmake --build build\n");
  fs::remove_all(dir);
}
