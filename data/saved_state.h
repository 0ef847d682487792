// saved_state.h: numbers read back from a checkpoint's JSON state.
//
// A saved counter, seed or generator word is always written as an integer, so these accept
// integers that fit (autograd/json_int.h says why get<int64_t>() alone would not do) and throw
// Error naming the field otherwise: the callers turn it into their DataError or CheckpointError.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "autograd/errors.h"
#include "autograd/json_int.h"

namespace sf::data {

// j as an unsigned 64-bit integer; `what` names the field in the error.
inline uint64_t saved_u64(const nlohmann::json& j, const std::string& what) {
  if (!j.is_number_unsigned()) throw Error(what + ": must be an integer >= 0, got " + j.dump());
  return j.get<uint64_t>();
}

// j as a signed 64-bit integer (an unsigned one above INT64_MAX does not fit).
inline int64_t saved_i64(const nlohmann::json& j, const std::string& what) {
  const std::optional<int64_t> v = json_int(j);
  if (!v) throw Error(what + ": must be a 64-bit integer, got " + j.dump());
  return *v;
}

// j as a count (batches or examples drawn): a 64-bit integer >= 0.
inline int64_t saved_count(const nlohmann::json& j, const std::string& what) {
  const int64_t n = saved_i64(j, what);
  if (n < 0) throw Error(what + ": must be an integer >= 0, got " + j.dump());
  return n;
}

// The four words of a saved Generator state; throws Error starting with `what` if j is not an
// array of 4 unsigned integers. Checked here, in full, so that a caller can read every part of a
// saved state before it assigns any (Generator::set_state then cannot refuse the words).
inline std::vector<uint64_t> rng_state_from_json(const nlohmann::json& j, const std::string& what) {
  std::vector<uint64_t> words;
  if (j.is_array())
    for (const nlohmann::json& w : j) {
      if (!w.is_number_unsigned()) break;
      words.push_back(w.get<uint64_t>());
    }
  if (!j.is_array() || words.size() != j.size() || words.size() != 4)
    throw Error(what + ": a generator state must be an array of 4 unsigned integers");
  return words;
}

}  // namespace sf::data
