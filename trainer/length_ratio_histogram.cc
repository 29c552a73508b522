#include "trainer/length_ratio_histogram.h"

#include <algorithm>
#include <cmath>

namespace fanyi {

LengthRatioHistogram::LengthRatioHistogram(int64_t shortest_source)
    : shortest_source_(shortest_source) {}

void LengthRatioHistogram::Add(int64_t source_tokens, int64_t target_tokens) {
  if (source_tokens < shortest_source_ || source_tokens <= 0) return;
  ++count_;
  if (target_tokens <= 0) {
    ++empty_targets_;
    return;
  }
  const double octaves = std::log2(static_cast<double>(target_tokens) /
                                   static_cast<double>(source_tokens));
  const auto bin = static_cast<int64_t>(
      std::floor((octaves + kOctaves / 2.0) * kBinsPerOctave));
  ++bins_[static_cast<size_t>(std::clamp<int64_t>(bin, 0, kBins - 1))];
}

int LengthRatioHistogram::BinOfRank(int64_t rank) const {
  int64_t seen = empty_targets_;
  if (rank < seen) return -1;
  for (int bin = 0; bin < kBins; ++bin) {
    seen += bins_[static_cast<size_t>(bin)];
    if (rank < seen) return bin;
  }
  return kBins - 1;
}

double LengthRatioHistogram::LowerEdge(int bin) {
  if (bin < 0) return 0;
  return std::exp2(static_cast<double>(bin) / kBinsPerOctave - kOctaves / 2.0);
}

std::optional<LengthRatioHistogram::Bounds> LengthRatioHistogram::Percentiles(
    double low, double high, int64_t fewest) const {
  if (count_ < std::max<int64_t>(fewest, 1)) return std::nullopt;
  const auto rank = [&](double fraction) {
    return static_cast<int64_t>(
        std::llround(fraction * static_cast<double>(count_ - 1)));
  };
  Bounds bounds;
  bounds.low = LowerEdge(BinOfRank(rank(low)));
  bounds.high = LowerEdge(BinOfRank(rank(high)) + 1);
  return bounds;
}

}  // namespace fanyi
