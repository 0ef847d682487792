// optim_test_util.h: shared helpers of the optim tests (reference files, parameter sets).
#pragma once
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "optim/optimizer.h"

namespace sf::test {

inline nlohmann::json load_reference(const std::string& file) {
  std::ifstream in(std::string(SF_SOURCE_DIR) + "/tests/reference/optim/" + file);
  if (!in)
    throw DataError("missing reference file tests/reference/optim/" + file +
                    " (run /usr/bin/python3 tests/reference/gen_optim_ref.py)");
  return nlohmann::json::parse(in);
}

inline std::vector<double> doubles(const nlohmann::json& j) { return j.get<std::vector<double>>(); }

inline Shape shape_of(const nlohmann::json& j) { return j.get<Shape>(); }

}  // namespace sf::test
