// Learning-rate schedules at their key steps (values worked out by hand from the formulas).
#include <doctest/doctest.h>

#include <cmath>

#include "autograd/errors.h"
#include "optim/schedule.h"

using namespace sf;

TEST_CASE("constant, with and without warmup") {
  ScheduleOptions o;
  o.lr = 0.01;
  CHECK(lr_at(o, 0) == 0.01);
  CHECK(lr_at(o, 123456) == 0.01);
  o.warmup_steps = 4;
  CHECK(lr_at(o, 0) == doctest::Approx(0.01 / 5).epsilon(1e-15));  // starts above zero
  CHECK(lr_at(o, 3) == doctest::Approx(0.01 * 4 / 5).epsilon(1e-15));
  CHECK(lr_at(o, 4) == 0.01);
}

TEST_CASE("warmup then cosine decay to a floor") {
  ScheduleOptions o;
  o.kind = ScheduleKind::cosine;
  o.lr = 1e-3;
  o.min_lr = 1e-4;
  o.warmup_steps = 100;
  o.decay_steps = 2000;
  CHECK(lr_at(o, 0) == doctest::Approx(1e-3 / 101).epsilon(1e-14));
  CHECK(lr_at(o, 99) == doctest::Approx(1e-3 * 100 / 101).epsilon(1e-14));
  CHECK(lr_at(o, 100) == doctest::Approx(1e-3).epsilon(1e-14));     // peak right after warmup
  CHECK(lr_at(o, 1050) == doctest::Approx(5.5e-4).epsilon(1e-12));  // halfway: mean of lr, min_lr
  CHECK(lr_at(o, 575) == doctest::Approx(1e-4 + 9e-4 * (1 + std::sqrt(0.5)) / 2).epsilon(1e-12));  // q = 1/4
  CHECK(lr_at(o, 2000) == doctest::Approx(1e-4).epsilon(1e-14));
  CHECK(lr_at(o, 5000) == doctest::Approx(1e-4).epsilon(1e-14));  // stays at the floor
  for (int64_t s = 101; s < 2000; s += 37) CHECK(lr_at(o, s) < lr_at(o, s - 1));
}

TEST_CASE("cosine without warmup starts at the peak") {
  ScheduleOptions o;
  o.kind = ScheduleKind::cosine;
  o.lr = 2.0;
  o.decay_steps = 10;
  CHECK(lr_at(o, 0) == 2.0);
  CHECK(lr_at(o, 5) == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(lr_at(o, 10) == doctest::Approx(0.0).epsilon(1e-14));
}

TEST_CASE("warmup then linear decay") {
  ScheduleOptions o;
  o.kind = ScheduleKind::linear;
  o.lr = 1.0;
  o.min_lr = 0.2;
  o.warmup_steps = 9;
  o.decay_steps = 19;
  CHECK(lr_at(o, 0) == doctest::Approx(0.1).epsilon(1e-14));
  CHECK(lr_at(o, 9) == 1.0);
  CHECK(lr_at(o, 14) == doctest::Approx(0.6).epsilon(1e-14));
  CHECK(lr_at(o, 19) == doctest::Approx(0.2).epsilon(1e-14));
  CHECK(lr_at(o, 100) == doctest::Approx(0.2).epsilon(1e-14));
}

TEST_CASE("noam: inverse square root with linear warmup, s = step + 1") {
  ScheduleOptions o;
  o.kind = ScheduleKind::noam;
  o.lr = 2.0;  // the factor
  o.d_model = 512;
  o.warmup_steps = 4000;
  const double scale = 2.0 / std::sqrt(512.0);
  CHECK(lr_at(o, 0) == doctest::Approx(scale * 1 * std::pow(4000.0, -1.5)).epsilon(1e-14));  // step 0: s = 1
  CHECK(lr_at(o, 999) == doctest::Approx(scale * 1000 * std::pow(4000.0, -1.5)).epsilon(1e-14));
  CHECK(lr_at(o, 3999) == doctest::Approx(scale / std::sqrt(4000.0)).epsilon(1e-14));  // the peak
  CHECK(lr_at(o, 15999) == doctest::Approx(scale / std::sqrt(16000.0)).epsilon(1e-14));
  CHECK(lr_at(o, 3999) > lr_at(o, 3998));
  CHECK(lr_at(o, 3999) > lr_at(o, 4000));
  o.warmup_steps = 0;  // none: pure inverse square root
  CHECK(lr_at(o, 0) == doctest::Approx(scale).epsilon(1e-14));
  CHECK(lr_at(o, 3) == doctest::Approx(scale / 2).epsilon(1e-14));
}

TEST_CASE("impossible schedules are ConfigErrors naming the field") {
  ScheduleOptions o;
  o.kind = ScheduleKind::cosine;
  o.warmup_steps = 100;
  o.decay_steps = 100;
  CHECK_THROWS_WITH_AS(validate(o), "schedule.decay_steps (100) must be greater than warmup_steps (100)", ConfigError);
  o.decay_steps = 1000;
  o.min_lr = 1.0;
  CHECK_THROWS_AS(validate(o), ConfigError);
  o.min_lr = 0;
  o.lr = 0;
  CHECK_THROWS_AS(lr_at(o, 0), ConfigError);
  o.lr = 1e-3;
  CHECK_THROWS_AS(lr_at(o, -1), ConfigError);
}
