#ifndef FANYI_TRAINER_TENSOR_BATCH_H_
#define FANYI_TRAINER_TENSOR_BATCH_H_

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "common/model/transformer.h"
#include "trainer/training_batches.h"
#include "trainer/training_log.h"
#include "trainer/training_options.h"

namespace fanyi {

// Ids of a batch's pairs as model inputs: source (with </s>), target input
// starting with <s>, target output ending with </s>.
struct TensorBatch {
  torch::Tensor source;         // [batch, src_len (+ 1)]
  torch::Tensor target_input;   // [batch, tgt_len + 1]
  torch::Tensor target_output;  // [batch, tgt_len + 1]
  int64_t target_tokens = 0;
};

// The tensors of the pairs (`sources`[i], `targets`[i]) on `device`, the
// sources framed as the model reads them (MakeSourceTensor).
TensorBatch MakeTensorBatch(const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets,
                            const ModelConfig& model_config,
                            const torch::Device& device);

// Sum of per-token losses of a batch, label-smoothed; <pad> targets are
// ignored.
torch::Tensor BatchLoss(TransformerImpl& model, const TensorBatch& batch,
                        double label_smoothing);

// A batch's loss under R-Drop (Liang et al., 2021), summed over its target
// tokens: the batch runs through the model twice in one pass (so with two
// dropout masks in training), and `objective` is the two runs' mean
// label-smoothed loss plus `weight` / 4 times the sum of the two KL
// divergences between their predictions: the paper's loss with alpha =
// `weight`, halved so that it compares with BatchLoss's.
struct RDropLoss {
  torch::Tensor objective;      // What the gradients come from.
  torch::Tensor cross_entropy;  // The mean of the two runs' BatchLoss.
  torch::Tensor divergence;     // KL(P‖Q) + KL(Q‖P), summed over tokens.
};
RDropLoss BatchRDropLoss(TransformerImpl& model, const TensorBatch& batch,
                         double label_smoothing, double weight);

// Replaces each word of the batch's sources and target inputs (not <pad>,
// <s> or </s>) with <unk>, independently with `probability`: word dropout
// (Sennrich and Zhang, 2019). The target outputs, what the model is trained
// to predict, keep every word.
void DropWords(double probability, TensorBatch* batch);

// Forward and backward passes over a step's `batches`, each batch's loss
// divided by `step_tokens` (the target tokens of the whole step, every
// rank's): the gradients add up to those of the step's mean loss, whichever
// rank computed which part of it. The loss is `options`'s: label smoothing,
// word dropout, R-Drop, and bfloat16 autocast with precision bf16. Adds the
// cross-entropy and its target tokens to `*window`.
void AccumulateGradients(TransformerImpl& model,
                         const std::vector<TrainingBatch>& batches,
                         int64_t step_tokens, const TrainingOptions& options,
                         const torch::Device& device, ReportWindow* window);

}  // namespace fanyi

#endif  // FANYI_TRAINER_TENSOR_BATCH_H_
