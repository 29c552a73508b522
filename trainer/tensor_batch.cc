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
                            const ModelConfig& model_config,
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
  tensors.source = MakeSourceTensor(sources, model_config, device);
  tensors.target_input = PadRows(inputs, device);
  tensors.target_output = PadRows(outputs, device);
  return tensors;
}

namespace {

// Label-smoothed cross-entropy of `logits` [rows, vocab] against `targets`
// [rows], summed over the targets that are not <pad>.
torch::Tensor SmoothedLossSum(const torch::Tensor& logits,
                              const torch::Tensor& targets,
                              double label_smoothing) {
  namespace F = torch::nn::functional;
  return F::cross_entropy(logits, targets,
                          F::CrossEntropyFuncOptions()
                              .ignore_index(Vocabulary::kPadId)
                              .label_smoothing(label_smoothing)
                              .reduction(torch::kSum));
}

}  // namespace

torch::Tensor BatchLoss(TransformerImpl& model, const TensorBatch& batch,
                        double label_smoothing) {
  torch::Tensor logits = model.forward(batch.source, batch.target_input);
  const int64_t vocab = logits.size(-1);
  return SmoothedLossSum(logits.reshape({-1, vocab}),  // [batch * tgt_len,
                                                       //  vocab]
                         batch.target_output.reshape({-1}), label_smoothing);
}

RDropLoss BatchRDropLoss(TransformerImpl& model, const TensorBatch& batch,
                         double label_smoothing, double weight) {
  torch::Tensor logits =
      model.forward(torch::cat({batch.source, batch.source}),
                    torch::cat({batch.target_input, batch.target_input}));
  // [2 * batch, tgt_len, vocab]
  const int64_t vocab = logits.size(-1);
  torch::Tensor targets = batch.target_output.reshape({-1});
  // [batch * tgt_len]
  RDropLoss loss;
  loss.cross_entropy =
      SmoothedLossSum(logits.reshape({-1, vocab}),  // [2 * batch * tgt_len,
                                                    //  vocab]
                      torch::cat({targets, targets}), label_smoothing) /
      2;
  // At least float32: bfloat16 probabilities are too coarse for the
  // divergence of two nearly equal predictions.
  torch::Tensor log_probs = torch::log_softmax(
      logits.to(c10::promoteTypes(logits.scalar_type(), torch::kFloat))
          .reshape({2, -1, vocab}),
      -1);
  // [2, batch * tgt_len, vocab]
  torch::Tensor difference = log_probs[0] - log_probs[1];
  // [batch * tgt_len, vocab]
  // KL(P‖Q) + KL(Q‖P) = Σ (P - Q)(log P - log Q), per target token.
  torch::Tensor per_token =
      ((log_probs[0].exp() - log_probs[1].exp()) * difference).sum(-1);
  // [batch * tgt_len]
  loss.divergence =
      per_token.masked_fill(targets == Vocabulary::kPadId, 0).sum();
  loss.objective = loss.cross_entropy + weight / 4 * loss.divergence;
  return loss;
}

void DropWords(double probability, TensorBatch* batch) {
  for (torch::Tensor* ids : {&batch->source, &batch->target_input}) {
    torch::Tensor drop =
        torch::rand(ids->sizes(),
                    torch::TensorOptions().device(ids->device())) < probability;
    // [batch, len]; the specials sit at ids 0-3, words above.
    *ids = ids->masked_fill(drop & (*ids > Vocabulary::kEosId),
                            Vocabulary::kUnkId);
  }
}

void AccumulateGradients(TransformerImpl& model,
                         const std::vector<TrainingBatch>& batches,
                         int64_t step_tokens, const TrainingOptions& options,
                         const torch::Device& device, ReportWindow* window) {
  for (const TrainingBatch& batch : batches) {
    TensorBatch tensors =
        MakeTensorBatch(batch.sources, batch.targets, model.config(), device);
    if (options.word_dropout > 0) DropWords(options.word_dropout, &tensors);
    torch::Tensor objective, cross_entropy;
    {
      std::optional<compat::Bfloat16Autocast> autocast;
      if (options.precision == "bf16") autocast.emplace(device.type());
      if (options.rdrop_weight > 0) {
        RDropLoss loss = BatchRDropLoss(model, tensors, options.label_smoothing,
                                        options.rdrop_weight);
        objective = loss.objective;
        cross_entropy = loss.cross_entropy;
      } else {
        objective = BatchLoss(model, tensors, options.label_smoothing);
        cross_entropy = objective;
      }
    }
    (objective / static_cast<double>(step_tokens)).backward();
    window->loss_sum += cross_entropy.item<double>();
    window->loss_tokens += tensors.target_tokens;
  }
}

}  // namespace fanyi
