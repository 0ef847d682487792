// lesson_docs: rewrites the tagged code and output blocks of every lesson's two texts
// (lessons/NAME.md and lessons/zh/NAME.md) from the compiled sources and the real output
// in each language (`lesson_docs`), or only reports what is out of date (`lesson_docs --check`,
// exit code 1). tests/lessons/ runs the same check (check_lesson_texts in docs.h), except that
// it does not run the slow lessons. `--only NAME` does one lesson; the English run of each lesson
// draws its pictures into lessons/images/. `--excerpts` rewrites only the code blocks, without
// running anything (after a change that cannot change the output: a rename, scripts/format.sh).
#include <iostream>
#include <string>

#include "app/startup.h"
#include "autograd/errors.h"
#include "lessons/docs.h"
#include "lessons/lesson.h"

// What --only takes, said by both of its errors.
constexpr const char* kLessonHint = "(a name such as \"encoder\", or a number such as 9)";

int main(int argc, char** argv) {
  sf::start_program(argv);  // first: the BLAS kernels for this CPU (app/startup.h)
  using namespace sf::lessons;
  bool check = false, excerpts_only = false;
  std::string root = SF_SOURCE_DIR, only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check") check = true;
    else if (a == "--excerpts") excerpts_only = true;
    else if (a == "--only") {  // one lesson, by name or number
      if (i + 1 == argc) {
        std::cerr << "error: --only needs a lesson " << kLessonHint << "\n";
        return 2;
      }
      only = argv[++i];
    } else if (a.rfind("-", 0) != 0) root = a;  // the source tree (default: this build's)
    else {
      std::cerr << "error: " << a
                << ": unknown option (lesson_docs [--check | --excerpts] [--only NAME] [SOURCE_DIR])\n";
      return 2;
    }
  }
  if (!only.empty() && !find_lesson(only)) {
    std::cerr << "error: --only " << only << ": no such lesson " << kLessonHint << "\n";
    return 2;
  }
  int stale = 0;
  try {
    for (const Lesson& l : all_lessons()) {
      if (!only.empty() && find_lesson(only) != &l) continue;
      std::vector<std::string> problems;
      if (check) {
        problems = check_lesson_texts(root, l);
      } else if (excerpts_only) {
        for (const auto& path : sync_lesson_excerpts(root, l, problems)) std::cout << "updated " << path << "\n";
      } else {
        for (const auto& path : sync_lesson_texts(root, l, problems)) std::cout << "updated " << path << "\n";
      }
      for (const auto& p : problems) std::cerr << p << "\n";
      stale += static_cast<int>(problems.size());
    }
  } catch (const sf::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return stale ? 1 : 0;
}
