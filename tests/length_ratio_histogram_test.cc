#include "trainer/length_ratio_histogram.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fanyi {
namespace {

// The upper edge of the bin holding `ratio`: 2^(k/64) just above it.
double UpperEdge(double ratio) {
  return std::exp2(std::floor(std::log2(ratio) * 64 + 1e-9) / 64 + 1.0 / 64);
}

TEST(LengthRatioHistogramTest, FewPairsGiveNoBounds) {
  LengthRatioHistogram ratios(5);
  for (int i = 0; i < 999; ++i) ratios.Add(5, 10);
  // Shorter sources are not counted.
  for (int i = 0; i < 100; ++i) ratios.Add(4, 10);
  EXPECT_EQ(ratios.count(), 999);
  EXPECT_FALSE(ratios.Percentiles(0.005, 0.995, 1000).has_value());
  ratios.Add(5, 10);
  const auto bounds = ratios.Percentiles(0.005, 0.995, 1000);
  ASSERT_TRUE(bounds.has_value());
  EXPECT_DOUBLE_EQ(bounds->low, 2.0);
  EXPECT_DOUBLE_EQ(bounds->high, UpperEdge(2.0));
}

TEST(LengthRatioHistogramTest, BoundsLeaveOutTheRarestPairsEachSide) {
  LengthRatioHistogram ratios(5);
  for (int i = 0; i < 4; ++i) ratios.Add(10, 0);  // Empty targets: ratio 0.
  for (int i = 0; i < 990; ++i) ratios.Add(10, 12);
  for (int i = 0; i < 6; ++i) ratios.Add(10, 80);
  // Ranks 5 and 994 of 0..999: a ratio of 1.2 and one of 8.
  auto bounds = ratios.Percentiles(0.005, 0.995, 1000);
  ASSERT_TRUE(bounds.has_value());
  EXPECT_LE(bounds->low, 1.2);
  EXPECT_GT(bounds->low, 1.2 / std::exp2(1.0 / 64));
  EXPECT_DOUBLE_EQ(bounds->high, UpperEdge(8.0));
  // Percentiles among the empty targets give no lower bound.
  bounds = ratios.Percentiles(0.001, 0.5, 1000);
  EXPECT_EQ(bounds->low, 0);
  EXPECT_DOUBLE_EQ(bounds->high, UpperEdge(1.2));
}

TEST(LengthRatioHistogramTest, RatiosBeyondTheRangeCountInTheEndBins) {
  LengthRatioHistogram ratios(1);
  for (int i = 0; i < 10; ++i) ratios.Add(1, 1000000);
  for (int i = 0; i < 10; ++i) ratios.Add(1000000, 1);
  const auto bounds = ratios.Percentiles(0, 1, 1);
  ASSERT_TRUE(bounds.has_value());
  EXPECT_DOUBLE_EQ(bounds->low, std::exp2(-8.0));
  EXPECT_DOUBLE_EQ(bounds->high, std::exp2(8.0));
}

}  // namespace
}  // namespace fanyi
