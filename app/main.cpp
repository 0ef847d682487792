// main.cpp: the `scratchformer` executable. Parses the command line (CLI11), runs one
// subcommand, and turns any error a person can fix (sf::Error, and file-system errors such as a
// full disk) into one line and exit code 2; anything else is a bug: one line and exit code 3.
// Under mpirun (one process per rank) the line names the rank, and the failing rank ends the
// whole job (MPI_Abort) instead of leaving the others waiting for it in a collective.
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/startup.h"
#include "autograd/cpu/threads.h"
#include "autograd/errors.h"
#include "train/config.h"
#include "train/distributed.h"

namespace sf {
static int g_exit_code = 0;
void set_exit_code(int code) { g_exit_code = code; }
int exit_code() { return g_exit_code; }
}  // namespace sf

// Newlines in a message from outside sf::Error (a path can hold one) become spaces.
static std::string one_line(std::string s) {
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return s;
}

static int run(int argc, char** argv);

// A mistyped subcommand ("trian") reaches CLI11 as a stray word, which it reports as "A subcommand
// is required". Throws a ConfigError naming the word and the closest subcommand instead.
static void check_subcommand(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return;  // an option such as --help: CLI11's to handle
  const std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return;
    names.push_back(sub->get_name());
  }
  const std::string guess = sf::closest_match(word, names);
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw sf::ConfigError("unknown subcommand '" + word + "' (" +
                        (guess.empty() ? "valid: " + list : "did you mean '" + guess + "'?") + ")");
}

int main(int argc, char** argv) {
  sf::start_program(argv);       // first: the BLAS kernels for this CPU (app/startup.h)
  sf::dist::init(&argc, &argv);  // a no-op unless started by mpirun
  int code = run(argc, argv);
  const bool failed = code == 2 || code == 3;  // (130 after Ctrl-C is a clean stop, on every rank)
  if (failed && sf::dist::size() > 1) sf::dist::abort(code);
  sf::dist::finalize();
  return code;
}

// "error: " on one process, "error (rank 1 of 2): " under mpirun.
static std::string error_prefix() {
  if (sf::dist::size() == 1) return "error: ";
  return "error (rank " + std::to_string(sf::dist::rank()) + " of " + std::to_string(sf::dist::size()) + "): ";
}

static int run(int argc, char** argv) {
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
  sf::add_inspect_command(app);
  sf::add_exercise_command(app);

  // SF_NUM_THREADS is read once the command line is parsed, just before the subcommand runs: a bad
  // value is still an error, but one that does not stand in the way of --help.
  app.parse_complete_callback([] { sf::init_threads_from_env(); });

  try {
    check_subcommand(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: not an error
    // A usage error is one line like every other error ("--top-p: must be a finite number in
    // [0, 1], got nan"), not CLI11's two ("...\nRun with --help for more information.").
    std::cerr << error_prefix() << one_line(e.what()) << " (see --help)\n";
    return 2;
  } catch (const sf::Error& e) {
    std::cerr << error_prefix() << e.what() << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {  // the disk, not the input: full, read-only, ...
    // In words, naming the file: "runs/x/checkpoints: No space left on device", not the C++ text
    // ("filesystem error: cannot create directories: No space left on device [runs/x/checkpoints]").
    std::string where = e.path1().empty() ? "" : e.path1().string() + ": ";
    std::cerr << error_prefix() << one_line(where + e.code().message()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << error_prefix() << "out of memory (try a smaller model, batch_size or block_size)\n";
    return 2;
  } catch (const std::exception& e) {  // a bug: still one line, and a distinct exit code
    std::cerr << error_prefix() << "internal error (a bug in scratchformer, please report it): " << one_line(e.what())
              << "\n";
    return 3;
  }
  return sf::exit_code();
}
