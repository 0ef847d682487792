// rng_state.h: a Generator's state read back from a checkpoint's JSON.
//
// nlohmann's get<uint64_t>() takes a number written as a float (5.4e19) with a plain cast, which
// is undefined behaviour out of the type's range; a state must be 4 integers, so this accepts
// unsigned integers only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"

namespace sf::data {

// The words of a saved Generator state; throws Error starting with `what` if j is not an array of
// unsigned integers (Generator::set_state checks there are 4).
inline std::vector<uint64_t> rng_state_from_json(const nlohmann::json& j, const std::string& what) {
  std::vector<uint64_t> words;
  if (j.is_array())
    for (const nlohmann::json& w : j) {
      if (!w.is_number_unsigned()) break;
      words.push_back(w.get<uint64_t>());
    }
  if (!j.is_array() || words.size() != j.size())
    throw Error(what + ": a generator state must be an array of unsigned integers");
  return words;
}

}  // namespace sf::data
