// positions.h: what lesson positions returns, the key numbers it prints, so tests/lessons/ can
// assert them (the lesson itself: positions.cpp).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace sf::lessons {

// Positional encoding.
struct PositionsResult {
  std::vector<double> pe_row1;       // the sinusoidal table's row for position 1
  double shift_error;                // max |M_3 PE(p) - PE(p + 3)|
  std::string learned_error;         // looking up a position past the table
  std::vector<double> rope_scores;   // q.k for (2,0), (5,3), (12,10), (3,0), (10,7)
  double rope_norm_ratio;            // |rope(q)| / |q|
  std::vector<double> alibi_slopes;  // 4 heads
  std::vector<double> alibi_head0;   // (5, 5) bias of head 0
  double order_blind_diff;           // same token, two orders, no positions: 0
  double order_aware_diff;           // ... with sinusoidal positions: > 0
};
PositionsResult run_lesson_positions(std::ostream& out);

}  // namespace sf::lessons
