// fp16 / bf16 rounding (autograd/cpu/lowp.h), bit for bit against numpy.float16 and torch.bfloat16
// (reference bits in tests/reference/autograd/lowp.json, written by gen_autograd_ref.py), plus
// the edge cases spelled out by hand so a reader sees what each one means.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include <nlohmann/json.hpp>

#include "autograd/cpu/lowp.h"

using namespace sf;

static float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
static uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
static bool fp16_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }
static bool bf16_is_nan(uint16_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0; }

TEST_CASE("fp16 rounding edge cases") {
  CHECK(fp16_bits(65504.0f) == 0x7BFF);  // the largest finite fp16
  CHECK(fp16_bits(65519.0f) == 0x7BFF);  // below the midpoint to 65536: stays
  CHECK(fp16_bits(65520.0f) == 0x7C00);  // the midpoint rounds (to even) to inf
  CHECK(fp16_bits(-65520.0f) == 0xFC00);
  CHECK(fp16_bits(std::ldexp(1.0f, -14)) == 0x0400);             // smallest normal
  CHECK(fp16_bits(std::ldexp(1.0f, -24)) == 0x0001);             // smallest subnormal
  CHECK(fp16_bits(std::ldexp(1.0f, -25)) == 0x0000);             // exactly half of it: ties to even -> 0
  CHECK(fp16_bits(std::ldexp(1.5f, -25)) == 0x0001);             // more than half: rounds up
  CHECK(fp16_bits(std::ldexp(1.0f, -26)) == 0x0000);             // below half: 0
  CHECK(fp16_bits(std::ldexp(3.0f, -25)) == 0x0002);             // 1.5 ulp: tie to even (2)
  CHECK(fp16_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3C00);      // tie between 1 and 1+2^-10 -> 1
  CHECK(fp16_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);  // tie -> even mantissa 2
  CHECK(fp16_bits(std::numeric_limits<float>::infinity()) == 0x7C00);
  CHECK(fp16_bits(-std::numeric_limits<float>::infinity()) == 0xFC00);
  CHECK(fp16_bits(-0.0f) == 0x8000);  // -0 keeps its sign
  CHECK(fp16_is_nan(fp16_bits(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isnan(round_to_fp16(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::signbit(round_to_fp16(-0.0f)));
  CHECK(std::signbit(round_to_fp16(-std::ldexp(1.0f, -26))));  // a tiny negative flushes to -0
  CHECK(round_to_fp16(65519.0f) == 65504.0f);
  CHECK(std::isinf(round_to_fp16(65520.0f)));
}

TEST_CASE("bf16 rounding edge cases") {
  CHECK(bf16_bits(1.0f) == 0x3F80);
  CHECK(bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3F80);                          // tie -> even (1.0)
  CHECK(bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3F82);                      // tie -> even (mantissa 2)
  CHECK(bf16_bits(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3F81);  // above tie
  CHECK(bf16_bits(65520.0f) == 0x4780);                           // bf16 has float32's range: no overflow
  CHECK(bf16_bits(std::numeric_limits<float>::max()) == 0x7F80);  // rounds up past the max: inf
  CHECK(bf16_bits(from_bits(0x7F7F0000)) == 0x7F7F);              // the largest finite bf16 stays
  CHECK(bf16_bits(from_bits(0x00000001)) == 0x0000);              // smallest float32 subnormal -> 0
  CHECK(bf16_bits(from_bits(0x00008000)) == 0x0000);              // exact tie at the bottom -> even (0)
  CHECK(bf16_bits(from_bits(0x00018000)) == 0x0002);              // tie -> even (2)
  CHECK(bf16_bits(std::numeric_limits<float>::min()) == 0x0080);  // smallest normal float32
  CHECK(bf16_bits(std::numeric_limits<float>::infinity()) == 0x7F80);
  CHECK(bf16_bits(-std::numeric_limits<float>::infinity()) == 0xFF80);
  CHECK(bf16_bits(-0.0f) == 0x8000);
  CHECK(bf16_is_nan(bf16_bits(std::numeric_limits<float>::quiet_NaN())));
  CHECK(bf16_is_nan(bf16_bits(from_bits(0x7F800001))));  // a signalling NaN whose payload is
                                                         // all in the dropped bits stays NaN
  CHECK(bf16_is_nan(bf16_bits(from_bits(0xFFFFFFFF))));  // no carry out of a NaN
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
}

// NaN payloads differ between libraries (numpy gives 0x7E00; torch's vectorized bf16 cast gives
// 0xFFFF, its scalar one 0x7FC0), so for NaN inputs we check that the result is a NaN; every
// other value must match the reference bits exactly.
TEST_CASE("fp16 and bf16 bits match numpy.float16 and torch.bfloat16") {
  std::ifstream in(std::string(SF_SOURCE_DIR) + "/tests/reference/autograd/lowp.json");
  REQUIRE(in.good());
  nlohmann::json ref = nlohmann::json::parse(in);
  auto f32 = ref["f32_bits"].get<std::vector<uint32_t>>();
  auto h16 = ref["fp16_bits"].get<std::vector<uint16_t>>();
  auto b16 = ref["bf16_bits"].get<std::vector<uint16_t>>();
  REQUIRE(f32.size() == h16.size());
  REQUIRE(f32.size() == b16.size());
  REQUIRE(f32.size() >= 200);
  int nan_cases = 0;
  for (size_t i = 0; i < f32.size(); ++i) {
    float x = from_bits(f32[i]);
    INFO("value " << i << " bits 0x" << std::hex << f32[i] << " (" << x << ")");
    if (std::isnan(x)) {
      ++nan_cases;
      CHECK(fp16_is_nan(fp16_bits(x)));
      CHECK(bf16_is_nan(bf16_bits(x)));
      continue;
    }
    CHECK(fp16_bits(x) == h16[i]);
    CHECK(bf16_bits(x) == b16[i]);
    // round_to_* is the decoded value of the same bits
    CHECK(bits_of(round_to_bf16(x)) == static_cast<uint32_t>(b16[i]) << 16);
  }
  CHECK(nan_cases == 1);
}

TEST_CASE("round_inplace and AutocastGuard") {
  Tensor t = Tensor::from_vector({1.0 + 1.0 / 1024 + 1.0 / 4096, 70000.0, -0.0}, {3});
  round_inplace(t, Precision::fp16);
  std::vector<double> v = t.to_vector();
  CHECK(v[0] == 1.0 + 1.0 / 1024);
  CHECK(std::isinf(v[1]));
  CHECK(std::signbit(v[2]));
  Tensor d = Tensor::from_vector({1.0 + 1e-9}, {1}, DType::f64);  // float64 is never rounded
  round_inplace(d, Precision::bf16);
  CHECK(d.item() == 1.0 + 1e-9);
  CHECK(autocast_precision() == Precision::fp32);
  {
    AutocastGuard guard(Precision::bf16);
    CHECK(autocast_precision() == Precision::bf16);
    CHECK(std::string(precision_name(autocast_precision())) == "bf16");
  }
  CHECK(autocast_precision() == Precision::fp32);
}

TEST_CASE("round_inplace and lowp_copy (vectorized, threaded) give the scalar rounding's bits") {
  // Every kind of value, in a tensor long enough to take the vector and threaded paths and with a
  // length that leaves a scalar tail: normals, ties, subnormals, overflow, zeros, inf and NaN.
  std::vector<float> base = {1.0f + 1.0f / 1024 + 1.0f / 4096,
                             65504.0f,
                             65520.0f,
                             70000.0f,
                             6.0e-8f,
                             2.9e-8f,
                             3.0e-8f,
                             1e-30f,
                             -0.0f,
                             0.0f,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             1.00390625f,
                             -1.0f - 1.0f / 128 - 1.0f / 256,
                             3.3895314e38f,
                             0.1f,
                             -7.7e-5f};
  const int64_t n = 70001;
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    values[static_cast<size_t>(i)] =
        base[static_cast<size_t>(i) % base.size()] * (i % 3 == 0 ? 1.0f : 1.0f + 1e-3f * float(i % 7));
  for (Precision p : {Precision::fp16, Precision::bf16}) {
    Tensor t = Tensor::from_vector(values, {n});
    Tensor original = t.clone();
    Tensor copy;
    {
      AutocastGuard guard(p);
      copy = lowp_copy(t);
    }
    round_inplace(t, p);
    const float* x = original.data<float>();
    int mismatches = 0;
    for (int64_t i = 0; i < n; ++i) {
      float expect = p == Precision::fp16 ? round_to_fp16(x[i]) : round_to_bf16(x[i]);
      bool same = std::isnan(expect) ? std::isnan(t.data<float>()[i]) && std::isnan(copy.data<float>()[i])
                                     : bits_of(expect) == bits_of(t.data<float>()[i]) &&
                                           bits_of(expect) == bits_of(copy.data<float>()[i]);
      mismatches += !same;
    }
    CHECK_MESSAGE(mismatches == 0, precision_name(p));
  }
}
