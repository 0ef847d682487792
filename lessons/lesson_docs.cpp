// lesson_docs: rewrites the tagged code and output blocks of every lesson's markdown from the
// compiled sources and the real output (`lesson_docs`), or only reports what is out of date
// (`lesson_docs --check`, exit code 1). tests/lessons/ runs the same check.
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
      std::string md_path = root + "/lessons/" + l.file + ".md";
      std::string md = read_text_file(md_path);
      auto excerpts = extract_excerpts(read_text_file(root + "/lessons/" + l.file + ".cpp"));
      auto outputs = output_sections(lesson_output(l));
      std::vector<std::string> problems;
      std::string synced = sync_markdown(md, excerpts, outputs, problems);
      for (const auto& p : problems) std::cerr << md_path << ": " << p << "\n";
      stale += static_cast<int>(problems.size());
      if (synced == md) continue;
      if (check) {
        std::cerr << md_path << ": out of date (run lesson_docs)\n";
        ++stale;
      } else {
        write_text_file(md_path, synced);
        std::cout << "updated " << md_path << "\n";
      }
    }
  } catch (const sf::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return stale ? 1 : 0;
}
