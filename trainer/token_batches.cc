#include "trainer/token_batches.h"

#include <algorithm>
#include <numeric>

namespace fanyi {

std::vector<std::vector<int64_t>> MakeTokenBatches(
    const std::vector<PairLength>& lengths, int64_t batch_tokens,
    std::mt19937_64& rng) {
  std::vector<int64_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  // Shuffle first so that the stable sort leaves equal lengths in random
  // order: each epoch sees different batch compositions.
  std::shuffle(order.begin(), order.end(), rng);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    if (lengths[a].source != lengths[b].source) {
      return lengths[a].source < lengths[b].source;
    }
    return lengths[a].target < lengths[b].target;
  });

  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> current;
  int64_t longest = 0;
  for (int64_t index : order) {
    const int64_t length =
        std::max(lengths[index].source, lengths[index].target);
    const int64_t grown = std::max(longest, length);
    if (!current.empty() &&
        grown * static_cast<int64_t>(current.size() + 1) > batch_tokens) {
      batches.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(index);
    longest = std::max(longest, length);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

}  // namespace fanyi
