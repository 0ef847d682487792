// scratch.h: a kernel's scratch buffer kept between calls (not part of the public API).
#pragma once
#include <cstddef>
#include <vector>

namespace sf::kernels {

// v with room for at least n elements; returns its data. It only grows: resize() value-initialises
// (zeroes) every element it adds, so a buffer shared by calls of different sizes, resized to each,
// was zeroed afresh whenever a larger call followed a smaller one (a 512-row weight gradient after
// a 128-row one: 390 KB of memset, for values the caller overwrites anyway). Never shrinking costs
// no memory: a vector keeps its capacity when resized down.
template <class T>
T* scratch_of(std::vector<T>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

}  // namespace sf::kernels
