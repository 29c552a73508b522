// Starting a run from another model's weights: fine-tuning, and the second
// stage of bidirectional training.
#ifndef FANYI_TRAINER_WEIGHT_TRANSFER_H_
#define FANYI_TRAINER_WEIGHT_TRANSFER_H_

#include <cstdint>

#include "common/model/checkpoint.h"

namespace fanyi {

// How many of each vocabulary's tokens found their row in the other model.
struct WeightTransfer {
  int64_t source_tokens_found = 0;
  int64_t target_tokens_found = 0;
};

// Copies `from`'s weights into `to`: every parameter as it is, except the
// embedding tables (and an untied generator), which are copied row by row
// for the tokens both vocabularies hold, matched by their text. Rows of
// tokens `from` lacks keep what they had. So `to` may have other
// vocabularies: one direction's, taken from a bidirectional model's joint
// one. Throws std::invalid_argument naming the first parameter whose name
// or shape differs (another d_model, d_ff, layer count or tying).
WeightTransfer TransferWeights(const Checkpoint& from, Checkpoint& to);

}  // namespace fanyi

#endif  // FANYI_TRAINER_WEIGHT_TRANSFER_H_
