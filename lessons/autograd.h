// autograd.h: what lesson autograd returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: autograd.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Autograd by hand: L = a * tanh(a*b + c) at a = 2, b = -1, c = 0.5.
struct AutogradResult {
  double loss;
  std::vector<double> by_hand;    // dL/da, dL/db, dL/dc by the chain rule
  std::vector<double> by_engine;  // the same from L.backward()
  std::vector<double> by_finite_difference;
  std::string dot;  // the graph in Graphviz DOT
};
AutogradResult run_lesson_autograd(std::ostream& out);

}  // namespace sf::lessons
