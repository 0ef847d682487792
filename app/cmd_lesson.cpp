// cmd_lesson.cpp: `scratchformer lesson` lists the lessons; `scratchformer lesson NAME` (or its
// number) runs one and prints it. `--lang zh` (or SF_LANG=zh) prints the headings and
// explanations in Chinese, with the same numbers; error messages stay in English. The lessons
// and their texts live in lessons/ (Chinese texts in lessons/zh/). A lesson draws its pictures
// (PNG, with gnuplot) only when asked: `--images DIR` draws them into DIR (`--images images`
// puts them where the lines "picture: images/FILE" it prints point); by default, and with
// `--no-images`, it draws none and writes no file. `--json` prints the list as
// JSON, with each lesson's exercises: what the course site (scripts/course.py) is built from, so
// the site follows the registry's order.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "autograd/errors.h"
#include "exercises/check/checker.h"
#include "lessons/lesson.h"

namespace sf {

// The registry as JSON: {"lessons": [{"number", "name", "file", "title", "title_zh", "slow",
// "part": {"number", "title", "title_zh", "about", "about_zh"}, "exercises": [{"number", "title",
// "title_zh", "file"}]}]}, in reading order.
static std::string lessons_json() {
  const std::vector<lessons::Part>& parts = lessons::course_parts();
  nlohmann::json list = nlohmann::json::array();
  for (const lessons::Lesson& l : lessons::all_lessons()) {
    nlohmann::json exercises = nlohmann::json::array();
    for (const exercise::Exercise& e : exercise::all_exercises())
      if (e.lesson == l.name)
        exercises.push_back(
            {{"number", e.number}, {"title", e.title}, {"title_zh", exercise::title_zh(e)}, {"file", e.file}});
    const lessons::Part& part = parts.at(static_cast<size_t>(l.part));
    list.push_back({{"number", l.number},
                    {"name", l.name},
                    {"file", l.file},
                    {"title", l.title},
                    {"title_zh", l.title_zh},
                    {"slow", l.slow},
                    {"part",
                     {{"number", l.part + 1},
                      {"title", part.title},
                      {"title_zh", part.title_zh},
                      {"about", part.about},
                      {"about_zh", part.about_zh}}},
                    {"exercises", exercises}});
  }
  return nlohmann::json{{"lessons", list}}.dump(1);
}

void add_lesson_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("lesson", "list the lessons, or run one: lesson NAME | lesson NUMBER");
  auto name = std::make_shared<std::string>();
  auto lang = std::make_shared<std::string>();
  auto images = std::make_shared<std::string>();
  auto no_images = std::make_shared<bool>(false);
  auto as_json = std::make_shared<bool>(false);
  cmd->add_option("name", *name, "the lesson to run (its name or number); omit to list them");
  cmd->add_option("--lang", *lang,
                  "the language of the headings and explanations: en or zh "
                  "(default: the SF_LANG environment variable, else en)");
  cmd->add_option("--images", *images,
                  "draw the lesson's pictures into this folder (created when needed); "
                  "without it the lesson draws none and prints the same");
  cmd->add_flag("--no-images", *no_images, "draw no pictures (the default; overrides --images)");
  cmd->add_flag("--json", *as_json, "print the list of lessons and their exercises as JSON");
  cmd->callback([name, lang, images, no_images, as_json] {
    if (*as_json) {
      if (!name->empty()) throw ConfigError("lesson: --json prints the whole list; give no lesson name with it");
      std::cout << lessons_json() << "\n";
      return;
    }
    lessons::Lang language =
        lang->empty() ? lessons::language_from_environment() : lessons::parse_language(*lang, "lesson --lang");
    lessons::set_language(std::cout, language);
    if (name->empty()) {
      lessons::print_lesson_list(std::cout);
      return;
    }
    const lessons::Lesson* lesson = lessons::find_lesson(*name);
    if (!lesson) throw ConfigError("lesson: no lesson named '" + *name + "' (run `scratchformer lesson` for the list)");
    if (!*no_images && !images->empty()) lessons::set_image_dir(std::cout, *images);
    lesson->run(std::cout);
  });
}

}  // namespace sf
