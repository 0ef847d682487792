// Float64 central-difference gradient checks of every module and of tiny whole models
// (the registry in nn/gradcheck_modules.cpp, also run by `scratchformer gradcheck`).
#include <doctest/doctest.h>

#include <chrono>
#include <iostream>

#include "nn/gradcheck_modules.h"

using namespace sf;

static void run_group(const std::string& group) {
  int n = 0;
  for (const GradcheckCase& c : module_gradcheck_cases()) {
    if (c.group != group) continue;
    ++n;
    INFO(c.group << " / " << c.name);
    GradcheckResult r = c.run();
    CHECK_MESSAGE(r.ok, r.describe());
    CHECK(r.checked > 0);
  }
  CHECK(n > 0);
}

TEST_CASE("gradcheck nn.layers") { run_group("nn.layers"); }
TEST_CASE("gradcheck nn.attention") { run_group("nn.attention"); }
TEST_CASE("gradcheck nn.blocks") { run_group("nn.blocks"); }
TEST_CASE("gradcheck nn.gpt") { run_group("nn.gpt"); }
TEST_CASE("gradcheck nn.transformer") { run_group("nn.transformer"); }
