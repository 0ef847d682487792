// commands.h: the subcommands of the `scratchformer` CLI, one registration function per file.
// A new subcommand (lesson, compare, ...) is a new cli/cmd_<name>.cpp with an add_<name>_command
// and one line in main.cpp.
#pragma once

namespace CLI {
class App;
}

namespace sf {

void add_train_command(CLI::App& app);       // cmd_train.cpp
void add_eval_command(CLI::App& app);        // cmd_eval.cpp
void add_sample_command(CLI::App& app);      // cmd_sample.cpp
void add_gradcheck_command(CLI::App& app);   // cmd_gradcheck.cpp
void add_data_command(CLI::App& app);        // cmd_data.cpp
void add_config_doc_command(CLI::App& app);  // cmd_config_doc.cpp
void add_lesson_command(CLI::App& app);      // cmd_lesson.cpp
void add_compare_command(CLI::App& app);     // cmd_compare.cpp
void add_inspect_command(CLI::App& app);     // cmd_inspect.cpp
void add_exercise_command(CLI::App& app);    // cmd_exercise.cpp

// The process exit code a subcommand asks for (0 unless it sets it, e.g. gradcheck failures).
void set_exit_code(int code);
int exit_code();

}  // namespace sf
