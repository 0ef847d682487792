// broadcasting.h: what lesson broadcasting returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: broadcasting.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Broadcasting and gradcheck.
struct BroadcastingResult {
  std::vector<int64_t> broadcast_shape;                 // of (2, 3) + (3)
  std::vector<double> bias_grad;                        // the reduced gradient of the (3) bias
  std::vector<int64_t> col_grad_shape, row_grad_shape;  // (4, 1) * (3): each reduced to its input
  std::string unreduced_error;                          // what the engine says when a backward forgets to reduce
  bool gradcheck_correct_ok;                            // gradcheck of the correct bias_add passes
  bool gradcheck_buggy_ok;                              // ... and of the one whose backward drops rows fails
  int64_t gradcheck_entries;                            // Jacobian entries compared
  double buggy_analytic, buggy_numeric;                 // the failing entry gradcheck names
};
BroadcastingResult run_lesson_broadcasting(std::ostream& out);

}  // namespace sf::lessons
