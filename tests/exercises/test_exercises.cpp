// Every exercise, checked by the real checker: built against exercises/solutions/ each must
// pass; built against the learner's exercises/ (stubs in a clean clone) each must report
// "not implemented yet". One test case per exercise. (Each mutant of a solution is its own
// program and test: mutants.cmake.)
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "exercises/check/checker.h"
#include "lessons/lesson.h"

using namespace sf::exercise;

#ifndef SF_EXERCISE_VARIANT
#error "build with SF_EXERCISE_VARIANT=0 (the learner's copies) or 1 (the solutions)"
#endif

#if SF_EXERCISE_VARIANT == 0
#define VARIANT "stubs: "
#define CASE_NAME "stub of "
#else
#define VARIANT "solutions: "
#define CASE_NAME "solution of "
#endif

static std::string joined(const Report& r) {
  std::string s;
  for (const std::string& line : r.lines()) s += line + "\n";
  return s;
}

// Whether the learner has changed exercises/<file>.cpp from the committed stub (git says so;
// without git, or outside a checkout, the copy counts as untouched and is checked strictly).
[[maybe_unused]] static bool edited_by_learner(const Exercise& e) {
  std::string cmd =
      "git -C '" + std::string(SF_SOURCE_DIR) + "' diff --quiet HEAD -- 'exercises/" + e.file + ".cpp' >/dev/null 2>&1";
  int rc = std::system(cmd.c_str());
  return rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 1;
}

static void check_exercise(int number) {
  const Exercise& e = find_exercise(std::to_string(number));
  Report r = run_exercise(e);
  CAPTURE(joined(r));
#if SF_EXERCISE_VARIANT == 1
  CHECK(r.outcome() == Outcome::passed);
  CHECK(r.checks_passed() >= 3);  // forward, gradient or state, and edge cases: never a token check
  CHECK(r.lines().size() == static_cast<size_t>(r.checks_passed()));
#else
  if (r.outcome() != Outcome::not_implemented && edited_by_learner(e)) {
    MESSAGE("skipped: you have edited exercises/" << e.file << ".cpp; this test checks the committed stub");
    return;
  }
  REQUIRE(r.outcome() == Outcome::not_implemented);
  REQUIRE(r.lines().size() == 1);
  CHECK(r.lines()[0].rfind("not implemented yet: ", 0) == 0);
  CHECK(r.lines()[0].find("exercises/" + e.file + ".cpp") != std::string::npos);
#endif
}

TEST_CASE(VARIANT "every exercise: numbered in increasing order, with a lesson, a difficulty and three hint tiers") {
  const auto& all = all_exercises();
  REQUIRE(all.size() >= 18);
  for (size_t i = 0; i < all.size(); ++i) {
    CAPTURE(all[i].number);
    if (i > 0) CHECK(all[i - 1].number < all[i].number);
    CHECK(sf::lessons::find_lesson(all[i].lesson) != nullptr);
    CHECK(all[i].difficulty >= 1);
    CHECK(all[i].difficulty <= 5);
    const HintTiers& h = hints_of(all[i].number);
    for (int t = 0; t < 3; ++t) {
      CHECK(std::string(h.en[t]).size() > 20);
      CHECK(std::string(h.zh[t]).size() > 20);
    }
  }
}

#if SF_EXERCISE_VARIANT == 1
// The exercises' texts name a lesson as the course lists it, number and name ("lesson 5
// attention", "lessons 9 layernorm and 10 feedforward", "第 14 课 build-gpt", a table's "| 14
// build-gpt |"): every such number must be that lesson's in the course today, so that a lesson
// moved or renamed shows here, not in a learner's confusion. Each stub also names its own lesson.
TEST_CASE("the exercises' texts name each lesson by its number and name in the course") {
  namespace fs = std::filesystem;
  const std::regex english(R"(lessons?\s+(\d+\s+[a-z][a-z-]*(?:(?:,\s+|\s+and\s+)\d+\s+[a-z][a-z-]*)*))");
  const std::regex chinese(R"(第 (\d+) 课 ([a-z][a-z-]*))");
  const std::regex table_row(R"(\| (\d+) ([a-z][a-z-]*) \|)");
  const std::regex item(R"((\d+)\s+([a-z][a-z-]*))");
  int named = 0;
  auto check_pair = [&](const std::string& where, const std::string& number, const std::string& name) {
    CAPTURE(where);
    CAPTURE(number + " " + name);
    const sf::lessons::Lesson* l = sf::lessons::find_lesson(name);
    REQUIRE(l != nullptr);
    CHECK(std::to_string(l->number) == number);
    ++named;
  };
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(SF_SOURCE_DIR) / "exercises")) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".md")) continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str(), where = entry.path().filename().string();
    for (std::sregex_iterator m(s.begin(), s.end(), english), end; m != end; ++m) {
      const std::string span = (*m)[1];
      for (std::sregex_iterator i(span.begin(), span.end(), item); i != end; ++i) check_pair(where, (*i)[1], (*i)[2]);
    }
    for (const std::regex* re : {&chinese, &table_row})
      for (std::sregex_iterator m(s.begin(), s.end(), *re), end; m != end; ++m) check_pair(where, (*m)[1], (*m)[2]);
  }
  for (const Exercise& e : all_exercises()) {
    CAPTURE(e.file);
    std::ifstream in(fs::path(SF_SOURCE_DIR) / "exercises" / (e.file + ".cpp"));
    std::string first;
    std::getline(in, first);
    const sf::lessons::Lesson* l = sf::lessons::find_lesson(e.lesson);
    REQUIRE(l != nullptr);
    CHECK(first.find("(lesson " + std::to_string(l->number) + " " + e.lesson) != std::string::npos);
  }
  CHECK(named > 60);  // the stubs, exercise.h, both READMEs' tables and walks
}
#endif

#if SF_EXERCISE_VARIANT == 1
// Every check runs with the solutions, so every check's name and hint passes through the table of
// Chinese texts here: none may be missing. A FAIL line in Chinese is tested with a mutant
// (tests/exercises/CMakeLists.txt).
TEST_CASE("in Chinese, every check of every exercise has its name and hint in Chinese") {
  set_chinese(true);
  for (const Exercise& e : all_exercises()) {
    Report r = run_exercise(e);
    CAPTURE(e.number);
    CHECK(r.outcome() == Outcome::passed);
    for (const std::string& line : r.lines()) CHECK(line.rfind("通过  ", 0) == 0);
  }
  set_chinese(false);
  std::string missing;
  for (const std::string& en : untranslated()) missing += "  {\"" + en + "\", \"\"},\n";
  CAPTURE(missing);
  CHECK(untranslated().empty());
}
#endif

#define EXERCISE_CASE(N) \
  TEST_CASE(CASE_NAME "exercise " #N) { check_exercise(N); }
EXERCISE_CASE(1)
EXERCISE_CASE(2)
EXERCISE_CASE(3)
EXERCISE_CASE(4)
EXERCISE_CASE(5)
EXERCISE_CASE(6)
EXERCISE_CASE(7)
EXERCISE_CASE(8)
EXERCISE_CASE(9)
EXERCISE_CASE(10)
EXERCISE_CASE(11)
EXERCISE_CASE(12)
EXERCISE_CASE(13)
EXERCISE_CASE(14)
EXERCISE_CASE(15)
EXERCISE_CASE(16)
EXERCISE_CASE(17)
EXERCISE_CASE(18)
EXERCISE_CASE(19)
EXERCISE_CASE(20)
EXERCISE_CASE(21)
EXERCISE_CASE(22)
EXERCISE_CASE(23)
EXERCISE_CASE(24)
EXERCISE_CASE(25)
EXERCISE_CASE(26)
EXERCISE_CASE(27)
EXERCISE_CASE(28)
EXERCISE_CASE(29)
EXERCISE_CASE(30)
EXERCISE_CASE(31)
