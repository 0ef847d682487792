// lesson_docs: rewrites the tagged code and output blocks of every lesson's two texts
// (lessons/NN_name.md and lessons/zh/NN_name.md) from the compiled sources and the real output
// in each language (`lesson_docs`), or only reports what is out of date (`lesson_docs --check`,
// exit code 1). tests/lessons/ runs the same check (check_lesson_texts in docs.h).
#include <iostream>
#include <string>

#include "autograd/errors.h"
#include "lessons/docs.h"
#include "lessons/lesson.h"

int main(int argc, char** argv) {
  using namespace sf::lessons;
  bool check = argc > 1 && std::string(argv[1]) == "--check";
  std::string root = argc > 2 ? argv[2] : SF_SOURCE_DIR;
  int stale = 0;
  try {
    for (const Lesson& l : all_lessons()) {
      std::vector<std::string> problems;
      if (check) {
        problems = check_lesson_texts(root, l);
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
