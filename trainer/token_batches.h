#ifndef FANYI_TRAINER_TOKEN_BATCHES_H_
#define FANYI_TRAINER_TOKEN_BATCHES_H_

#include <cstdint>
#include <random>
#include <vector>

namespace fanyi {

// Token lengths of one training pair (specials included).
struct PairLength {
  int64_t source;
  int64_t target;
};

// Groups pair indices into length-bucketed batches: pairs are sorted by
// length (ties in random order) and cut so that rows × longest side stays
// within `batch_tokens`, which keeps padding low and the work per step even.
// The batch order is shuffled. A pair longer than `batch_tokens` gets a batch
// of its own.
std::vector<std::vector<int64_t>> MakeTokenBatches(
    const std::vector<PairLength>& lengths, int64_t batch_tokens,
    std::mt19937_64& rng);

}  // namespace fanyi

#endif  // FANYI_TRAINER_TOKEN_BATCHES_H_
