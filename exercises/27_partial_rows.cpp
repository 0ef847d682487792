// Exercise 27 (lesson 21 online-softmax): merging two partial rows of attention.
//
// FlashAttention never holds a query's full row of scores: it walks the keys tile by tile and
// keeps, per query, the tile's running max, the sum of exponentials and the output so far, all
// relative to that max. Two tiles (or two threads' halves of the keys) are then merged. This is
// exercise 9's merge with the output vector added.
//
//   input:   two PartialRow {max, sum, out (D values)}: out = sum over the tile's keys of
//            e^(score - max) v_key; an empty row (no key seen) has max -inf, sum 0, out empty
//   returns: the PartialRow of both tiles; out / sum is then the attention output
//   contract: out of both (when not empty) has the same size D, else sf::ShapeError; merging
//            with an empty row returns the other; two empty rows give an empty row.
//
// Stuck? scratchformer exercise hint 27 (1 the idea, 2 the formula, 3 the code).
// Check it: scratchformer exercise check 27   (or ./run.sh exercise 27)
// 中文说明：exercises/zh/27_partial_rows.md（或 scratchformer exercise show 27 --lang zh）
#include "autograd/ops.h"
#include "exercises/exercise.h"

namespace sf::exercise {

PartialRow merge_partial_rows(const PartialRow& a, const PartialRow& b) {
  // TODO: return the merged partial row.
  todo("merge_partial_rows in exercises/27_partial_rows.cpp");
}

}  // namespace sf::exercise
