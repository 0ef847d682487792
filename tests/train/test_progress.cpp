// The progress line (train/progress.h): its log lines, and an ETA that counts the work
// left when steps cost differently.
#include <doctest/doctest.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "train/progress.h"

using namespace sf;

namespace {

// The ETA of the log line printed at `step`, in seconds ("1m05s" -> 65).
int eta_seconds(const std::string& log) {
  std::smatch m;
  REQUIRE(std::regex_search(log, m, std::regex("ETA (?:(\\d+)m)?(\\d+)s\\n$")));
  return (m[1].matched ? std::stoi(m[1]) * 60 : 0) + std::stoi(m[2]);
}

}  // namespace

TEST_CASE("progress: a log line every log_interval steps and at the last step") {
  std::ostringstream out;
  Progress p(5, 2, out, false);
  for (int64_t s = 1; s <= 5; ++s) p.update({s, 1.5, 1e-3, 0.25, 1000, 0});
  std::string log = out.str();
  CHECK(log.find("step 2/5 | loss 1.5000 | lr 1.00e-03 | norm 0.250 | 1.0k tok/s") != std::string::npos);
  CHECK(log.find("step 4/5") != std::string::npos);
  CHECK(log.find("step 5/5") != std::string::npos);
  CHECK(log.find("step 1/5") == std::string::npos);
  CHECK(log.find("step 3/5") == std::string::npos);
}

TEST_CASE("progress: with segment costs the ETA counts the work left, not the steps left") {
  // Two segments of 10 steps; a step of the second costs 9 times one of the first. After the
  // first segment (10 units of work in ~t seconds), 90 units are left: about 9 t, where counting
  // steps would say t.
  std::ostringstream plain, weighted;
  Progress by_steps(20, 10, plain, false), by_work(20, 10, weighted, false);
  by_work.set_segment_costs({1.0, 9.0}, 10);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  by_steps.update({10, 1, 1, 1, 1, 0});
  by_work.update({10, 1, 1, 1, 1, 0});
  int steps_eta = eta_seconds(plain.str()), work_eta = eta_seconds(weighted.str());
  CHECK(steps_eta >= 1);
  CHECK(work_eta >= 9 * steps_eta - 9);  // rounding of each to whole seconds
  CHECK(work_eta <= 9 * steps_eta + 9);
}

// The rate on a log line used to be that of the one step it lands on (after a resume the first
// step is slow, and a line showed 50k tok/s among steps of 1M).
TEST_CASE("progress: a log line shows the tokens per second over its interval, not its last step's") {
  std::ostringstream out;
  Progress p(4, 2, out, false);
  // Steps 1 and 3 take 1 s, steps 2 and 4 a millisecond; 1000 tokens each.
  for (int64_t s = 1; s <= 4; ++s) {
    const double seconds = s % 2 == 1 ? 1.0 : 0.001;
    p.update({s, 1.5, 1e-3, 0.25, 1000 / seconds, 0, 1000, seconds});
  }
  std::string log = out.str();
  CAPTURE(log);
  CHECK(log.find("step 2/4 | loss 1.5000 | lr 1.00e-03 | norm 0.250 | 2.0k tok/s") != std::string::npos);
  CHECK(log.find("step 4/4 | loss 1.5000 | lr 1.00e-03 | norm 0.250 | 2.0k tok/s") != std::string::npos);
}

TEST_CASE("progress: durations and the bar stay sane for any step count or time a run folder holds") {
  CHECK(format_duration(65) == "1m05s");
  CHECK(format_duration(1e300) == "?");  // a hand-edited loop.seconds; llround's result would be unspecified
  // Step 4e17 of 4.6e18 (a record's step can be that large): the bar is 2 of 24 wide (24 x step would overflow int64).
  std::ostringstream out;
  Progress p(int64_t(4'600'000'000'000'000'000), 2, out, true);
  p.update({int64_t(400'000'000'000'000'000), 1.5, 1e-3, 0.25, 1000.0, 0, 1000, 1.0});
  CHECK(out.str().find("[##......................]") != std::string::npos);
}

TEST_CASE("progress: the terminal bar, redrawn every step, shows that step's tokens per second") {
  std::ostringstream out;
  Progress p(4, 2, out, true);
  p.update({1, 1.5, 1e-3, 0.25, 1000.0, 0, 1000, 1.0});       // 1000 tok/s
  p.update({2, 1.5, 1e-3, 0.25, 1000000.0, 0, 1000, 0.001});  // 1.00M tok/s, not 2.0k (the average since step 1)
  const std::string bar = out.str();
  CAPTURE(bar);
  const size_t last = bar.rfind('\r');
  REQUIRE(last != std::string::npos);
  CHECK(bar.find("1.00M tok/s", last) != std::string::npos);
}
