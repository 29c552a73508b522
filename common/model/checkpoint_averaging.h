#ifndef FANYI_COMMON_MODEL_CHECKPOINT_AVERAGING_H_
#define FANYI_COMMON_MODEL_CHECKPOINT_AVERAGING_H_

#include <string>
#include <vector>

#include "common/model/checkpoint.h"

namespace fanyi {

// The element-wise mean of the weights of several checkpoints of one
// training run (the last few saves, as in "Attention Is All You Need",
// which averaged the last 5 or 20), loaded on the CPU. The first
// checkpoint's config, vocabularies and languages are kept; the training
// provenance lists the averaged directories. Throws std::invalid_argument
// for an empty list and std::runtime_error naming the directory whose
// model config or vocabularies differ from the first's (or that cannot be
// loaded).
Checkpoint AverageCheckpoints(const std::vector<std::string>& directories);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CHECKPOINT_AVERAGING_H_
