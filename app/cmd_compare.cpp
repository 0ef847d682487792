// cmd_compare.cpp: `scratchformer compare configs/compare_ln.json [--set section.key=value]...`
// runs the Pre-LN versus Post-LN study and writes report.md, CSVs and images to its run_dir.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "studies/compare_ln.h"

namespace sf {

void add_compare_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("compare", "run a comparison study (Pre-LN vs Post-LN) and write its report");
  auto config = std::make_shared<std::string>();
  auto overrides = std::make_shared<std::vector<std::string>>();
  cmd->add_option("config", *config, "study config, e.g. configs/compare_ln.json")->required();
  cmd->add_option("--set", *overrides, "override a field of the run config: section.key=value (repeatable)");
  cmd->callback([config, overrides] {
    CompareStudy study = load_compare_study(*config, *overrides);
    std::string report = run_compare_study(study, std::cout);
    std::cout << "report: " << report << "\n";
  });
}

}  // namespace sf
