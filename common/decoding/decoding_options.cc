#include "common/decoding/decoding_options.h"

#include <algorithm>
#include <cmath>

namespace fanyi {

int64_t MaxTargetLength(const DecodingOptions& options, int64_t source_length) {
  const auto scaled =
      static_cast<int64_t>(std::floor(options.length_ratio * source_length)) +
      options.length_offset;
  return std::max<int64_t>(1, std::min(options.max_length, scaled));
}

int64_t WindowSteps(const std::vector<int64_t>& lengths,
                    const std::vector<int64_t>& limits, int64_t steps) {
  const size_t rows = std::min(lengths.size(), limits.size());
  for (size_t r = 0; r < rows; ++r) {
    steps = std::min(steps, std::max<int64_t>(1, limits[r] - lengths[r]));
  }
  return steps;
}

}  // namespace fanyi
