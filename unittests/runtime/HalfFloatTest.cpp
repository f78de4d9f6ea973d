//===- HalfFloatTest.cpp - The collectives' f16/bf16 arithmetic -----------===//
//
// addHalves and scaleHalves (runtime/src/collectives/HalfFloat.h) take an
// F16C path eight or four at a time where the CPU has one: every f16 value,
// against the element-at-a-time conversions, must give the same bits (NaN
// payloads aside: both NaN).
//
//===----------------------------------------------------------------------===//

#include "HalfFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

using namespace grove::rt;

namespace {

bool sameHalf(uint16_t a, uint16_t b, bool bf16) {
  if (std::isnan(halfToFloat(a, bf16)))
    return std::isnan(halfToFloat(b, bf16));
  return a == b;
}

std::vector<uint16_t> everyHalf() {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < all.size(); ++i)
    all[i] = uint16_t(i);
  return all;
}

TEST(HalfFloat, AddMatchesElementwiseOnEveryValue) {
  std::mt19937 gen(7);
  for (bool bf16 : {false, true}) {
    std::vector<uint16_t> in = everyHalf();
    for (int trial = 0; trial < 16; ++trial) {
      std::vector<uint16_t> inout(in.size());
      for (uint16_t &h : inout)
        h = uint16_t(gen());
      std::vector<uint16_t> expected = inout;
      for (size_t i = 0; i < in.size(); ++i)
        expected[i] = floatToHalf(
            halfToFloat(in[i], bf16) + halfToFloat(expected[i], bf16), bf16);
      // An odd length leaves a tail for the scalar loop.
      addHalves(in.data(), inout.data(), int64_t(in.size()) - 3, bf16);
      for (size_t i = 0; i + 3 < in.size(); ++i)
        ASSERT_TRUE(sameHalf(inout[i], expected[i], bf16))
            << "bf16 " << bf16 << ": " << in[i] << " + ... at " << i;
    }
  }
}

TEST(HalfFloat, ScaleMatchesElementwiseOnEveryValue) {
  for (bool bf16 : {false, true}) {
    for (double factor : {0.5, 1.0 / 3, 0.25, 1.0 / 7}) {
      std::vector<uint16_t> data = everyHalf();
      std::vector<uint16_t> expected = data;
      for (uint16_t &h : expected)
        h = floatToHalf(float(halfToFloat(h, bf16) * factor), bf16);
      scaleHalves(data.data(), int64_t(data.size()) - 1, factor, bf16);
      for (size_t i = 0; i + 1 < data.size(); ++i)
        ASSERT_TRUE(sameHalf(data[i], expected[i], bf16))
            << "bf16 " << bf16 << ": " << i << " * " << factor;
    }
  }
}

TEST(HalfFloat, KnownValues) {
  EXPECT_EQ(floatToHalf(1.0f, false), 0x3c00);
  EXPECT_EQ(floatToHalf(65520.0f, false), 0x7c00); // rounds to infinity
  EXPECT_EQ(floatToHalf(1.0f, true), 0x3f80);
  EXPECT_EQ(halfToFloat(0x0001, false), std::ldexp(1.0f, -24));
  uint16_t a[1] = {0x3c00}, b[1] = {0x3c00};
  addHalves(a, b, 1, false);
  EXPECT_EQ(b[0], 0x4000); // 1 + 1 = 2
}

} // namespace
