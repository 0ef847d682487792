// cmd_exercise.cpp: `scratchformer exercise list` shows the exercises, their lessons and whether
// the learner's copy passes; `scratchformer exercise check N` (or `check all`) runs the checks of
// the learner's exercises/NN_name.cpp against the framework's own ops (exercises/check/);
// `scratchformer exercise hint N [tier]` prints its hints up to that tier; `scratchformer exercise
// show N` prints its task (the stub's header comment, or in Chinese exercises/zh/NN_name.md);
// `scratchformer exercise capstone` trains a GPT on Tiny Shakespeare with the learner's pieces.
// Everything prints in English or, with `--lang zh` (or SF_LANG=zh), in Chinese.
// The exit code is 0 when every checked exercise passes, 1 otherwise, 2 for a bad number.
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "autograd/errors.h"
#include "exercises/capstone.h"
#include "exercises/check/checker.h"
#include "lessons/lesson.h"

namespace sf {

// The checks run the exercises compiled into this binary. An exercises/NN_name.cpp saved after the
// binary was built is not what they would check: refuse (ConfigError) instead of a stale verdict.
static void check_built_after_edits(const std::string& which) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_time_type built = fs::last_write_time("/proc/self/exe", ec);
  if (ec) return;
  const exercise::Exercise* only = which == "all" ? nullptr : &exercise::find_exercise(which);
  for (const exercise::Exercise& e : exercise::all_exercises()) {
    if (only != nullptr && &e != only) continue;
    const fs::path file = fs::path(SF_EXERCISES_DIR) / (e.file + ".cpp");
    const fs::file_time_type edited = fs::last_write_time(file, ec);
    if (!ec && edited > built)
      throw ConfigError("exercises/" + e.file + ".cpp was saved after scratchformer was built, and the check runs " +
                        "the copy compiled into it; rebuild first: cmake --build build");
  }
}

// "lesson 5 attention" ("第 5 课 attention"): the exercise's lesson by number and name, from the
// course's list, in the checker's language.
static std::string lesson_label(const std::string& name) {
  const lessons::Lesson* l = lessons::find_lesson(name);
  if (exercise::chinese()) return l ? "第 " + std::to_string(l->number) + " 课 " + name : "课程 " + name;
  return l ? "lesson " + std::to_string(l->number) + " " + name : "lesson " + name;
}

// `exercise show N`: the task of exercise N as its stub's header comment states it, without the
// comment marks, or in Chinese as exercises/zh/NN_name.md states it, without the markdown fences.
// The Chinese file is the same text for the Chinese reader (tests/exercises/test_exercise_tasks.cpp
// keeps the two naming the same code and shapes).
static void print_task(const std::string& which, std::ostream& out) {
  const exercise::Exercise& e = exercise::find_exercise(which);
  const bool zh = exercise::chinese();
  const std::string file = zh ? "zh/" + e.file + ".md" : e.file + ".cpp";
  std::ifstream in(std::filesystem::path(SF_EXERCISES_DIR) / file);
  if (!in) throw ConfigError("exercise show: cannot read exercises/" + file);
  std::string line;
  while (std::getline(in, line)) {
    if (zh) {
      if (line.rfind("```", 0) != 0) out << line << "\n";
      continue;
    }
    if (line.rfind("//", 0) != 0) break;                            // the header ends where the code starts
    if (line.find("exercises/zh/") != std::string::npos) continue;  // the pointer to the Chinese text
    out << line.substr(line.rfind("// ", 0) == 0 ? 3 : 2) << "\n";
  }
}

// When the learner's code crashes (a wild index, a null pointer), the checks' lines so far are on
// the screen already; this adds which check was running and the likely cause, then lets the
// signal end the program as it would have (exit code 139 for SIGSEGV). Writes a prepared buffer
// only: nothing else is safe in a signal handler.
extern "C" void exercise_crashed(int sig) {
  const char* m = exercise::crash_message();
  size_t n = 0;
  while (m[n] != '\0') ++n;
  if (n > 0) (void)!write(STDERR_FILENO, m, n);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

static void report_crashes() {
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) std::signal(sig, exercise_crashed);
}

void add_exercise_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("exercise",
                                 "write the pieces yourself (exercises/NN_name.cpp) and check them: "
                                 "exercise list | exercise show N | exercise check N | exercise check all | "
                                 "exercise hint N [tier] | exercise capstone");
  cmd->require_subcommand(0, 1);
  auto lang = std::make_shared<std::string>();
  cmd->add_option("--lang", *lang, "the language of everything it prints: en or zh (default: SF_LANG, else en)");
  // Sets the checker's language from --lang or SF_LANG; runs first in every callback below.
  auto set_language = [lang] {
    const lessons::Lang l =
        lang->empty() ? lessons::language_from_environment() : lessons::parse_language(*lang, "exercise --lang");
    exercise::set_chinese(l == lessons::Lang::zh);
  };
  auto* list = cmd->add_subcommand("list", "each exercise, its lesson, and whether your copy passes");
  auto* show =
      cmd->add_subcommand("show", "the task of exercise N: shapes, contract, idea (in Chinese with --lang zh)");
  auto show_which = std::make_shared<std::string>();
  show->add_option("which", *show_which, "an exercise number")->required();
  auto* check = cmd->add_subcommand("check", "check one exercise (its number) or all of them");
  auto which = std::make_shared<std::string>();
  check->add_option("which", *which, "an exercise number (1, 2, ...) or all")->required();
  auto* hint = cmd->add_subcommand("hint", "hints for exercise N in tiers: 1 the idea, 2 the formula, 3 the code");
  auto hint_which = std::make_shared<std::string>();
  auto tier = std::make_shared<int>(1);
  hint->add_option("which", *hint_which, "an exercise number")->required();
  hint->add_option("tier", *tier, "show tiers 1 .. tier (default 1)");

  auto* capstone =
      cmd->add_subcommand("capstone", "train a GPT on Tiny Shakespeare with your pieces (exercises/README.md)");
  auto capstone_options = std::make_shared<exercise::CapstoneOptions>();
  capstone->add_option("--steps", capstone_options->steps, "training steps")->check(CLI::Range(1, 1000000));
  capstone->add_option("--target", capstone_options->target, "the val loss to reach")
      ->check(CLI::Validator(
          [](std::string& text) {
            const double x = std::strtod(text.c_str(), nullptr);
            return x > 0 && std::isfinite(x) ? std::string() : std::string("must be a positive number, e.g. 2.0");
          },
          "POSITIVE"));

  // `exercise check 5 --lang zh`: the subcommands pass --lang up to `exercise`.
  for (CLI::App* sub : {list, show, check, hint, capstone}) sub->fallthrough();
  capstone->callback([capstone_options, set_language] {
    set_language();
    check_built_after_edits("all");
    set_exit_code(exercise::run_capstone(*capstone_options, std::cout, lesson_label).exit_code);
  });

  list->callback([set_language] {
    set_language();
    exercise::print_list(std::cout, lesson_label, exercise::chinese());
  });
  show->callback([show_which, set_language] {
    set_language();
    print_task(*show_which, std::cout);
  });
  hint->callback([hint_which, tier, set_language] {
    set_language();
    exercise::print_hint(*hint_which, *tier, std::cout, exercise::chinese());
  });
  check->callback([which, set_language] {
    set_language();
    check_built_after_edits(*which);
    report_crashes();
    set_exit_code(exercise::print_check(*which, std::cout, lesson_label));
  });
  cmd->callback([cmd, set_language] {
    set_language();
    if (cmd->get_subcommands().empty())  // `exercise` alone
      exercise::print_list(std::cout, lesson_label, exercise::chinese());
  });
}

}  // namespace sf
