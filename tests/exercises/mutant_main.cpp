// mutant_main.cpp: the program of one mutant (mutants.cmake). Runs the checks of the exercise
// named on the command line (its file stem, "07_cross_entropy"), which this program links against
// a copy of the solution with one mistake in it, and exits 0 only when the checks find it: the
// exercise ends as failing, with a FAIL line and its hint. A mutant the checks pass "survives"
// and the test fails, printing every check it passed. With a second argument, the FAIL line must
// also contain that text: the diagnosis the checker gives for this mistake. With SF_LANG=zh the
// checks report in Chinese.
#include <cstdlib>
#include <iostream>
#include <string>

#include "exercises/check/checker.h"

using namespace sf::exercise;

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::cerr << "usage: " << argv[0] << " NN_exercise_file [diagnosis]\n";
    return 2;
  }
  const std::string stem = argv[1];
  // SF_LANG=zh: the checks report in Chinese (a test asserts a Chinese FAIL line and diagnosis).
  const char* lang = std::getenv("SF_LANG");
  set_chinese(lang != nullptr && std::string(lang) == "zh");
  for (const Exercise& e : all_exercises()) {
    if (e.file != stem) continue;
    Report r = run_exercise(e);
    for (const std::string& line : r.lines()) std::cout << "  " << line << "\n";
    const auto& lines = r.lines();
    const bool found = r.outcome() == Outcome::failed && lines.size() >= 2 &&
                       lines[lines.size() - 2].rfind(fail_mark(), 0) == 0 && lines.back().rfind(hint_mark(), 0) == 0 &&
                       lines[lines.size() - 2].find(tr("the checker itself", "检查器本身")) == std::string::npos;
    if (found && argc == 3 && lines[lines.size() - 2].find(argv[2]) == std::string::npos) {
      std::cout << "UNDIAGNOSED: exercise " << e.number << " fails this mutant, but its FAIL line does not say \""
                << argv[2] << "\"\n";
      return 1;
    }
    if (found) {
      std::cout << "found: the checks of exercise " << e.number << " fail this mutant\n";
      return 0;
    }
    std::cout << "SURVIVED: the checks of exercise " << e.number << " (" << outcome_name(r.outcome())
              << ") do not catch this mutant of exercises/solutions/" << stem << ".cpp\n";
    return 1;
  }
  std::cerr << "no exercise with the file " << stem << "\n";
  return 2;
}
