// cmd_config_doc.cpp: `scratchformer config-doc` prints configs/README.md, generated from the
// field list in experiments/config.h (so the documentation of every key cannot go stale).
#include <iostream>

#include <CLI/CLI.hpp>

#include "experiments/cli/commands.h"
#include "experiments/config.h"

namespace sf {

void add_config_doc_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("config-doc", "print the config reference (configs/README.md) generated from the code");
  auto configs_dir = std::make_shared<std::string>("configs");
  cmd->add_option("--configs", *configs_dir, "folder of ready configs to list with their descriptions")
      ->capture_default_str();
  cmd->callback([configs_dir] { std::cout << config_doc_markdown(*configs_dir); });
}

}  // namespace sf
