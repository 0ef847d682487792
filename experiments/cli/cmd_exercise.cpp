// cmd_exercise.cpp: `scratchformer exercise list` shows the exercises, their lessons and whether
// the learner's copy passes; `scratchformer exercise check N` (or `check all`) runs the checks of
// the learner's exercises/NN_name.cpp against the framework's own ops (exercises/check/).
// The exit code is 0 when every checked exercise passes, 1 otherwise, 2 for a bad number.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "autograd/errors.h"
#include "exercises/capstone.h"
#include "exercises/check/checker.h"
#include "experiments/cli/commands.h"

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

void add_exercise_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("exercise",
                                 "write the pieces yourself (exercises/NN_name.cpp) and check them: "
                                 "exercise list | exercise check N | exercise check all | exercise capstone");
  cmd->require_subcommand(0, 1);
  auto* list = cmd->add_subcommand("list", "each exercise, its lesson, and whether your copy passes");
  auto* check = cmd->add_subcommand("check", "check one exercise (its number) or all of them");
  auto which = std::make_shared<std::string>();
  check->add_option("which", *which, "an exercise number (1, 2, ...) or all")->required();

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

  list->callback([] { exercise::print_list(std::cout); });
  capstone->callback([capstone_options] {
    check_built_after_edits("all");
    set_exit_code(exercise::run_capstone(*capstone_options, std::cout).exit_code);
  });
  check->callback([which] {
    check_built_after_edits(*which);
    set_exit_code(exercise::print_check(*which, std::cout));
  });
  cmd->callback([cmd] {
    if (cmd->get_subcommands().empty()) exercise::print_list(std::cout);  // `exercise` alone
  });
}

}  // namespace sf
