// names.h: an option's one list of names, each with the enum value it stands for. Each table
// sits beside its enum (the attention kernels in autograd, the layer options in nn, the rest in
// train/options.h); the config checks names against it (train/config.cpp) and turns them into
// the enums the model configs hold (train/models.cpp), and printing a model names its options
// with it. So a config accepts exactly the names the code knows, and a name is written once.
#pragma once
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "autograd/errors.h"

namespace sf {

template <class E>
struct Named {
  const char* name;
  E value;
};

template <class E, size_t N>
std::vector<std::string> names_of(const std::array<Named<E>, N>& table) {
  std::vector<std::string> names;
  for (const Named<E>& n : table) names.push_back(n.name);
  return names;
}

// The value named `name`; anything else is a ConfigError naming `what` and the valid names.
template <class E, size_t N>
E parse_named(const std::array<Named<E>, N>& table, const std::string& name, const std::string& what) {
  for (const Named<E>& n : table)
    if (name == n.name) return n.value;
  std::string valid;
  for (const Named<E>& n : table) valid += (valid.empty() ? "" : ", ") + std::string(n.name);
  throw ConfigError(what + ": unknown '" + name + "' (valid: " + valid + ")");
}

template <class E, size_t N>
constexpr const char* name_of(const std::array<Named<E>, N>& table, E value) {
  for (const Named<E>& n : table)
    if (n.value == value) return n.name;
  return "?";
}

}  // namespace sf
