#include "trainer/tensor_batch.h"

#include <torch/nn/functional/loss.h>

#include <optional>
#include <utility>

#include "common/decoding/greedy_decoder.h"
#include "common/model/torch_compat.h"
#include "common/text/vocabulary.h"

namespace fanyi {

TensorBatch MakeTensorBatch(const std::vector<std::vector<int64_t>>& sources,
                            const std::vector<std::vector<int64_t>>& targets,
                            const torch::Device& device) {
  std::vector<std::vector<int64_t>> inputs, outputs;
  TensorBatch tensors;
  for (const std::vector<int64_t>& target : targets) {
    std::vector<int64_t> input = {Vocabulary::kBosId};
    input.insert(input.end(), target.begin(), target.end());
    std::vector<int64_t> output = target;
    output.push_back(Vocabulary::kEosId);
    tensors.target_tokens += static_cast<int64_t>(output.size());
    inputs.push_back(std::move(input));
    outputs.push_back(std::move(output));
  }
  tensors.source = MakeSourceTensor(sources, device);
  tensors.target_input = PadRows(inputs, device);
  tensors.target_output = PadRows(outputs, device);
  return tensors;
}

torch::Tensor BatchLoss(TransformerImpl& model, const TensorBatch& batch,
                        double label_smoothing) {
  torch::Tensor logits = model.forward(batch.source, batch.target_input);
  const int64_t vocab = logits.size(-1);
  namespace F = torch::nn::functional;
  return F::cross_entropy(
      logits.reshape({-1, vocab}),  // [batch * tgt_len, vocab]
      batch.target_output.reshape({-1}),
      F::CrossEntropyFuncOptions()
          .ignore_index(Vocabulary::kPadId)
          .label_smoothing(label_smoothing)
          .reduction(torch::kSum));
}

void AccumulateGradients(TransformerImpl& model,
                         const std::vector<TrainingBatch>& batches,
                         int64_t step_tokens, double label_smoothing, bool bf16,
                         const torch::Device& device, ReportWindow* window) {
  for (const TrainingBatch& batch : batches) {
    TensorBatch tensors = MakeTensorBatch(batch.sources, batch.targets, device);
    torch::Tensor loss;
    {
      std::optional<compat::Bfloat16Autocast> autocast;
      if (bf16) autocast.emplace(device.type());
      loss = BatchLoss(model, tensors, label_smoothing);
    }
    (loss / static_cast<double>(step_tokens)).backward();
    window->loss_sum += loss.item<double>();
    window->loss_tokens += tensors.target_tokens;
  }
}

}  // namespace fanyi
