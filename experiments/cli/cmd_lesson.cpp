// cmd_lesson.cpp: `scratchformer lesson` lists the lessons; `scratchformer lesson NAME` (or its
// number) runs one and prints it. The lessons and their texts live in lessons/.
#include <iomanip>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "autograd/errors.h"
#include "experiments/cli/commands.h"
#include "lessons/lesson.h"

namespace sf {

void add_lesson_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("lesson", "list the lessons, or run one: lesson NAME | lesson NUMBER");
  auto name = std::make_shared<std::string>();
  cmd->add_option("name", *name, "the lesson to run (its name or number); omit to list them");
  cmd->callback([name] {
    using lessons::Lesson;
    if (name->empty()) {
      std::cout << "Lessons (text in lessons/NN_name.md; run one with `scratchformer lesson NAME`):\n";
      for (const Lesson& l : lessons::all_lessons())
        std::cout << std::setw(3) << l.number << "  " << std::left << std::setw(16) << l.name
                  << std::right << l.title << "\n";
      return;
    }
    const Lesson* lesson = lessons::find_lesson(*name);
    if (!lesson)
      throw ConfigError("lesson: no lesson named '" + *name +
                        "' (run `scratchformer lesson` for the list)");
    lesson->run(std::cout);
  });
}

}  // namespace sf
