// Exercise 9 (lesson 21 online-softmax): the online softmax, the trick inside FlashAttention.
//
// softmax needs the row max before it can exponentiate, which seems to require two passes over
// the scores. The online softmax keeps a running state (max m, sum l of e^(score - m)) and
// fixes the sum whenever the max changes, so one pass suffices; two blocks of scores processed
// separately (on two threads, or two tiles of keys) can be merged afterwards. The probabilities
// are then e^(x_i - m) / l.
//
//   state:   SoftmaxState{max, sum}; an empty state is {-inf, 0}
//   edges:   a -inf score (a masked key) adds e^-inf = 0, but e^(-inf - (-inf)) is nan: leave
//            the state unchanged for it. Merging two empty states gives an empty state.
//   idea:    keep the sum of exponentials relative to the largest score so far; when a larger
//            one arrives, rescale what was summed against the old max.
//
// Derive it on paper first. Stuck? scratchformer exercise hint 9 (1 the idea), then
// hint 9 2 (the formula) and hint 9 3 (the code); a failing check also gives a hint.
// Check it: scratchformer exercise check 9   (or ./run.sh exercise 9)
// 中文说明：exercises/zh/09_online_softmax.md（或 scratchformer exercise show 9 --lang zh）
#include <algorithm>
#include <cmath>
#include <limits>

#include "exercises/exercise.h"

namespace sf::exercise {

void online_softmax_update(SoftmaxState& state, double score) {
  // TODO: fold `score` into state.max and state.sum.
  todo("online_softmax_update in exercises/09_online_softmax.cpp");
}

SoftmaxState online_softmax_merge(const SoftmaxState& a, const SoftmaxState& b) {
  // TODO: return the state of both blocks together.
  todo("online_softmax_merge in exercises/09_online_softmax.cpp");
}

}  // namespace sf::exercise
