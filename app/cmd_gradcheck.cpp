// cmd_gradcheck.cpp: `scratchformer gradcheck [--filter TEXT]` runs the float64 finite-difference
// check of every op (autograd) and every module (nn) and prints one table row per check.
// The exit code is 1 when any check fails.
#include <cmath>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "autograd/gradcheck.h"
#include "nn/gradcheck_modules.h"

namespace sf {

void add_gradcheck_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("gradcheck", "check every op's and module's backward against float64 central differences");
  auto filter = std::make_shared<std::string>();
  cmd->add_option("--filter", *filter, "only the checks whose group or name contains this text");
  cmd->callback([filter] {
    std::vector<GradcheckCase> cases = op_gradcheck_cases();
    for (auto& c : module_gradcheck_cases()) cases.push_back(std::move(c));
    // Each check compares every Jacobian entry: it passes when |analytic - numeric| <= atol +
    // rtol |numeric|. The columns describe the entry closest to failing: its difference, what
    // the criterion allows there, and the share of that allowance it uses (over 100% fails).
    // A relative error alone would mislead where the gradient is about 0.
    const GradcheckOptions criterion;
    std::printf("criterion: |analytic - numeric| <= %g + %g |numeric| for every Jacobian entry (eps %g)\n",
                criterion.atol, criterion.rtol, criterion.eps);
    std::printf("%-16s %-52s %12s %12s %8s  %s\n", "group", "name", "|a - n|", "allowed", "used", "ok");
    int64_t run = 0, failed = 0;
    for (const auto& c : cases) {
      if (!filter->empty() && c.group.find(*filter) == std::string::npos && c.name.find(*filter) == std::string::npos)
        continue;
      GradcheckResult r = c.run();
      double diff = std::fabs(r.analytic - r.numeric);
      double allowed = criterion.atol + criterion.rtol * std::fabs(r.numeric);
      std::printf("%-16s %-52s %12.3e %12.3e %7.2f%%  %s\n", c.group.c_str(), c.name.c_str(), diff, allowed,
                  100 * r.worst_ratio, r.ok ? "ok" : "FAIL");
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
