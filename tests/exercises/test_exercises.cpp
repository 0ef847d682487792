// Every exercise, checked by the real checker: built against exercises/solutions/ each must
// pass; built against the learner's exercises/ (stubs in a clean clone) each must report
// "not implemented yet"; built against mutants of the solutions (mutants.cmake) each must fail
// with a FAIL line and a hint. One test case per exercise.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "exercises/check/checker.h"
#include "lessons/lesson.h"

using namespace sf::exercise;

#ifndef SF_EXERCISE_VARIANT
#error \
    "build with SF_EXERCISE_VARIANT=0 (the learner's copies), 1 (the solutions), 2 (the mutants) or 3 (one assembly mutant)"
#endif

#if SF_EXERCISE_VARIANT == 0
#define VARIANT "stubs: "
#define CASE_NAME "stub of "
#elif SF_EXERCISE_VARIANT == 1
#define VARIANT "solutions: "
#define CASE_NAME "solution of "
#elif SF_EXERCISE_VARIANT == 2
#define VARIANT "mutants: "
#define CASE_NAME "mutant of "
#else
#define VARIANT "assembly mutant " SF_MUTANT_NAME ": "
#define CASE_NAME "assembly mutant " SF_MUTANT_NAME " of "
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
#elif SF_EXERCISE_VARIANT == 3
  REQUIRE(r.outcome() == Outcome::failed);
  REQUIRE(r.lines().size() >= 2);
  CHECK(r.lines()[r.lines().size() - 2].rfind("FAIL  ", 0) == 0);
  CHECK(r.lines().back().rfind("      hint: ", 0) == 0);
#elif SF_EXERCISE_VARIANT == 2
  REQUIRE(r.outcome() == Outcome::failed);
  REQUIRE(r.lines().size() >= 2);
  CHECK(r.lines()[r.lines().size() - 2].rfind("FAIL  ", 0) == 0);
  CHECK(r.lines().back().rfind("      hint: ", 0) == 0);
  CHECK(r.lines()[r.lines().size() - 2].find("your code threw") == std::string::npos);  // a wrong value, found
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

TEST_CASE(VARIANT "every exercise: one test case per registered exercise, numbered 1 to 23, each with its lesson") {
  const auto& all = all_exercises();
  REQUIRE(all.size() == 23);
  for (size_t i = 0; i < all.size(); ++i) {
    CHECK(all[i].number == static_cast<int>(i) + 1);
    CHECK(sf::lessons::find_lesson(all[i].lesson) != nullptr);  // the lesson that teaches it
  }
}

#if SF_EXERCISE_VARIANT == 3
#define EXERCISE_CASE(N)
#define ASSEMBLY_CASE(N)
TEST_CASE(CASE_NAME "exercise " SF_MUTANT_EXERCISE_STR) { check_exercise(SF_MUTANT_EXERCISE); }
#else
#define EXERCISE_CASE(N) \
  TEST_CASE(CASE_NAME "exercise " #N) { check_exercise(N); }
#if SF_EXERCISE_VARIANT == 2
// The assembly exercises call the earlier ones, which are mutated in this build: their own
// mutants run one per binary instead (test_exercise_mutant_*, mutants.cmake).
#define ASSEMBLY_CASE(N)
#else
#define ASSEMBLY_CASE(N) EXERCISE_CASE(N)
#endif
#endif
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
ASSEMBLY_CASE(19)
ASSEMBLY_CASE(20)
ASSEMBLY_CASE(21)
ASSEMBLY_CASE(22)
ASSEMBLY_CASE(23)
