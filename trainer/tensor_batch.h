#ifndef FANYI_TRAINER_TENSOR_BATCH_H_
#define FANYI_TRAINER_TENSOR_BATCH_H_

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "common/model/transformer.h"

namespace fanyi {

// Ids of a batch's pairs as model inputs: source with </s>, target input
// starting with <s>, target output ending with </s>.
struct TensorBatch {
  torch::Tensor source;         // [batch, src_len + 1]
  torch::Tensor target_input;   // [batch, tgt_len + 1]
  torch::Tensor target_output;  // [batch, tgt_len + 1]
  int64_t target_tokens = 0;
};

// The tensors of the pairs (`sources`[i], `targets`[i]) on `device`.
TensorBatch MakeTensorBatch(const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets,
                            const torch::Device& device);

// Sum of per-token losses of a batch, label-smoothed; <pad> targets are
// ignored.
torch::Tensor BatchLoss(TransformerImpl& model, const TensorBatch& batch,
                        double label_smoothing);

}  // namespace fanyi

#endif  // FANYI_TRAINER_TENSOR_BATCH_H_
