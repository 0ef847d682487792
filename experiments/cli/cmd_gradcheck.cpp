// cmd_gradcheck.cpp: `scratchformer gradcheck [--filter TEXT]` runs the float64 finite-difference
// check of every op (autograd) and every module (nn) and prints one table row per check.
// The exit code is 1 when any check fails.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "autograd/gradcheck.h"
#include "experiments/cli/commands.h"
#include "nn/gradcheck_modules.h"

namespace sf {

void add_gradcheck_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("gradcheck",
                                 "check every op's and module's backward against float64 central differences");
  auto filter = std::make_shared<std::string>();
  cmd->add_option("--filter", *filter, "only the checks whose group or name contains this text");
  cmd->callback([filter] {
    std::vector<GradcheckCase> cases = op_gradcheck_cases();
    for (auto& c : module_gradcheck_cases()) cases.push_back(std::move(c));
    // The error columns describe the Jacobian entry closest to failing: |analytic - numeric|
    // and that difference relative to |numeric|.
    std::printf("%-16s %-52s %12s %12s  %s\n", "group", "name", "worst abs", "worst rel", "ok");
    int64_t run = 0, failed = 0;
    for (const auto& c : cases) {
      if (!filter->empty() && c.group.find(*filter) == std::string::npos &&
          c.name.find(*filter) == std::string::npos)
        continue;
      GradcheckResult r = c.run();
      double abs_err = std::fabs(r.analytic - r.numeric);
      double rel_err = abs_err / std::max(std::fabs(r.numeric), 1e-300);
      std::printf("%-16s %-52s %12.3e %12.3e  %s\n", c.group.c_str(), c.name.c_str(), abs_err,
                  r.numeric == 0 && abs_err == 0 ? 0.0 : rel_err, r.ok ? "ok" : "FAIL");
      if (!r.ok) std::printf("    %s\n", r.describe().c_str());
      ++run;
      failed += r.ok ? 0 : 1;
    }
    std::printf("%lld checks, %lld failed\n", (long long)run, (long long)failed);
    if (run == 0) std::printf("no check matches --filter '%s'\n", filter->c_str());
    if (failed > 0 || run == 0) set_exit_code(1);
  });
}

}  // namespace sf
