// main.cpp: the `scratchformer` executable. Parses the command line (CLI11), runs one
// subcommand, and turns any error a person can fix (sf::Error) into one line and exit code 2.
#include <iostream>

#include <CLI/CLI.hpp>

#include "autograd/errors.h"
#include "autograd/threads.h"
#include "experiments/cli/commands.h"

namespace sf {
static int g_exit_code = 0;
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }
}  // namespace sf

int main(int argc, char** argv) {
  CLI::App app{"scratchformer: train small transformers built from scratch, and watch how they learn."};
  app.require_subcommand(1);
  app.fallthrough();
  sf::add_train_command(app);
  sf::add_eval_command(app);
  sf::add_sample_command(app);
  sf::add_gradcheck_command(app);
  sf::add_data_command(app);
  sf::add_config_doc_command(app);
  sf::add_lesson_command(app);
  sf::add_compare_command(app);

  try {
    sf::init_threads_from_env();
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);  // prints --help, or the usage error
    return rc == 0 ? 0 : 2;
  } catch (const sf::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  return sf::exit_code();
}
