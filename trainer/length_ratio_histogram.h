#ifndef FANYI_TRAINER_LENGTH_RATIO_HISTOGRAM_H_
#define FANYI_TRAINER_LENGTH_RATIO_HISTOGRAM_H_

#include <array>
#include <cstdint>
#include <optional>

namespace fanyi {

// Target tokens per source token of a corpus's pairs, in fixed memory: a
// histogram of log2(ratio) in bins of 1/64 from 2^-8 to 2^8 (ratios beyond
// count in the end bins), plus the pairs with an empty target. What the
// OutputGuard takes as a translation's usual length (Checkpoint::
// target_ratio_low and _high).
class LengthRatioHistogram {
 public:
  // Pairs with fewer source tokens are not counted (their ratios vary too
  // much; OutputGuard::kShortestRatioChecked).
  explicit LengthRatioHistogram(int64_t shortest_source);

  void Add(int64_t source_tokens, int64_t target_tokens);

  // Pairs counted.
  int64_t count() const { return count_; }

  // The ratios below which `low` and above which 1 - `high` of the counted
  // pairs lie (to the bin: the lower bound rounded down, the upper up);
  // none with fewer than `fewest` pairs counted.
  struct Bounds {
    double low = 0;
    double high = 0;
  };
  std::optional<Bounds> Percentiles(double low, double high,
                                    int64_t fewest) const;

 private:
  static constexpr int kBinsPerOctave = 64;
  static constexpr int kOctaves = 16;  // 2^-8 to 2^8.
  static constexpr int kBins = kBinsPerOctave * kOctaves;

  // The bin holding the pair of rank `rank` (from 0) in ratio order; -1 for
  // the empty targets.
  int BinOfRank(int64_t rank) const;
  // The ratio at the lower edge of `bin` (0 for -1).
  static double LowerEdge(int bin);

  const int64_t shortest_source_;
  int64_t count_ = 0;
  int64_t empty_targets_ = 0;
  std::array<int64_t, kBins> bins_{};
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_LENGTH_RATIO_HISTOGRAM_H_
