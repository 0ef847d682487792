// cmd_exercise.cpp: `scratchformer exercise list` shows the exercises, their lessons and whether
// the learner's copy passes; `scratchformer exercise check N` (or `check all`) runs the checks of
// the learner's exercises/NN_name.cpp against the framework's own ops (exercises/check/).
// The exit code is 0 when every checked exercise passes, 1 otherwise, 2 for a bad number.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "exercises/check/checker.h"
#include "experiments/cli/commands.h"

namespace sf {

void add_exercise_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("exercise",
                                 "write the pieces yourself (exercises/NN_name.cpp) and check them: "
                                 "exercise list | exercise check N | exercise check all");
  cmd->require_subcommand(0, 1);
  auto* list = cmd->add_subcommand("list", "each exercise, its lesson, and whether your copy passes");
  auto* check = cmd->add_subcommand("check", "check one exercise (its number) or all of them");
  auto which = std::make_shared<std::string>();
  check->add_option("which", *which, "an exercise number (1, 2, ...) or all")->required();

  list->callback([] { exercise::print_list(std::cout); });
  check->callback([which] { set_exit_code(exercise::print_check(*which, std::cout)); });
  cmd->callback([cmd] {
    if (cmd->get_subcommands().empty()) exercise::print_list(std::cout);  // `exercise` alone
  });
}

}  // namespace sf
