// The key numbers of lesson 17 (scaling out), each against its formula computed here, and the
// real runs' agreement within float rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "lessons/lesson.h"
#include "lessons/scaling_out.h"
#include "nn/gpt.h"  // make_gpt
#include "train/config.h"
#include "train/task.h"

using namespace sf;
using namespace sf::lessons;

TEST_CASE("lesson 17: accumulation is the big batch within float rounding, the ring moves 2(N-1)/N, the cost model") {
  std::ostringstream out;
  ScalingOutResult r = run_lesson_scaling_out(out);

  // Step 1-2: the same gradient and the same losses up to the order of float32 additions, while
  // a step per batch of 4 is another run altogether. The bounds are those the lesson prints: 1e-06
  // for one step's gradient, 1e-05 for twenty steps' losses (rounding compounds from step to step:
  // 4 x 2 reached 1.03e-06 in a sanitizer build on OpenBLAS's Haswell kernels); the run that steps
  // every 4 rows differs by 6.28e-02.
  CHECK(r.gradient_elements > 0);
  CHECK(r.gradient_diff < 1e-6);
  REQUIRE(r.big.size() == 20);
  CHECK(r.accum2_diff < 1e-5);
  CHECK(r.accum4_diff < 1e-5);
  CHECK(r.small_diff > 1e-3);
  CHECK(r.big.back() < r.big.front());  // it learns

  // Step 3: the simulated ring sums exactly (small integers) and sends 2(N-1)/N of the buffer.
  CHECK(r.ring_error == 0);
  CHECK(r.ring_sent_fraction == doctest::Approx(2.0 * 3 / 4));

  // Step 4: parameter counts of built models, and the alpha-beta formula for one table cell.
  CHECK(r.gpt2_params == 124439808);  // GPT-2 small, as published
  Config ours = load_config(std::string(SF_SOURCE_DIR) + "/configs/default.json");
  CHECK(r.default_params == make_gpt(ours, 65)->num_parameters());
  REQUIRE(r.gpt2_ms.size() == 20);  // 5 links x 4 GPU counts
  const double bytes = 4.0 * 124439808;
  CHECK(r.gpt2_ms[0] == doctest::Approx(1e3 * (2 * 7 * 5e-6 + 2.0 * 7 / 8 * bytes / (25e9 / 8))));  // 25 Gb/s, N=8
  CHECK(r.gpt2_ms[19] ==
        doctest::Approx(1e3 * (2 * 1023 * 1e-6 + 2.0 * 1023 / 1024 * bytes / 300e9)));  // NVLink, N=1024
  for (size_t link = 0; link < 5; ++link)  // more GPUs never make the all-reduce cheaper
    for (size_t i = 1; i < 4; ++i) CHECK(r.gpt2_ms[link * 4 + i] > r.gpt2_ms[link * 4 + i - 1]);

  // Step 5: the all-reduce's share grows as the batch is cut finer; ZeRO-3 divides by N.
  REQUIRE(r.dp_share.size() == 4);
  for (size_t i = 1; i < 4; ++i) CHECK(r.dp_share[i] > r.dp_share[i - 1]);
  REQUIRE(r.memory_gb.size() == 4);
  CHECK(r.memory_gb[0] == doctest::Approx(16.0 * 124439808 / 1e9));
  CHECK(r.memory_gb[3] == doctest::Approx(r.memory_gb[0] / 64));
}

TEST_CASE("lesson 17 prints the same numbers in Chinese") {
  std::ostringstream en, zh;
  set_language(zh, Lang::zh);
  ScalingOutResult a = run_lesson_scaling_out(en), b = run_lesson_scaling_out(zh);
  CHECK(en.str() != zh.str());
  CHECK(zh.str().find("环形 all-reduce") != std::string::npos);
  CHECK(a.big == b.big);
  CHECK(a.gpt2_ms == b.gpt2_ms);
}
