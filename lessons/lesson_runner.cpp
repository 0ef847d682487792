// lesson_runner: `lesson_runner` lists the lessons, `lesson_runner NAME` runs one.
// The same as `scratchformer lesson [NAME]`.
#include <iomanip>
#include <iostream>

#include "autograd/errors.h"
#include "lessons/lesson.h"

int main(int argc, char** argv) {
  using namespace sf::lessons;
  if (argc < 2) {
    for (const Lesson& l : all_lessons())
      std::cout << std::setw(2) << l.number << "  " << std::left << std::setw(16) << l.name
                << std::right << l.title << "\n";
    return 0;
  }
  const Lesson* lesson = find_lesson(argv[1]);
  if (!lesson) {
    std::cerr << "error: no lesson named '" << argv[1] << "' (run without arguments for the list)\n";
    return 2;
  }
  try {
    lesson->run(std::cout);
  } catch (const sf::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
