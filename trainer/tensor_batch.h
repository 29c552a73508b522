#ifndef FANYI_TRAINER_TENSOR_BATCH_H_
#define FANYI_TRAINER_TENSOR_BATCH_H_

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "common/model/transformer.h"
#include "trainer/training_batches.h"
#include "trainer/training_log.h"

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

// Forward and backward passes over a step's `batches`, each batch's loss
// divided by `step_tokens` (the target tokens of the whole step, every
// rank's): the gradients add up to those of the step's mean loss, whichever
// rank computed which part of it. With `bf16`, the forward passes run under
// bfloat16 autocast. Adds the losses and their target tokens to `*window`.
void AccumulateGradients(TransformerImpl& model,
                         const std::vector<TrainingBatch>& batches,
                         int64_t step_tokens, double label_smoothing, bool bf16,
                         const torch::Device& device, ReportWindow* window);

}  // namespace fanyi

#endif  // FANYI_TRAINER_TENSOR_BATCH_H_
