#include "common/decoding/greedy_decoder.h"

#include <ATen/ops/argmax.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/decoding/continuous_decoder.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

torch::Device ModelDevice(TransformerImpl& model) {
  return model.parameters().front().device();
}

// `rows` padded to one width, each ended by </s> when `end_with_eos` (or
// when empty and `end_empty_with_eos`).
torch::Tensor RowsToTensor(const std::vector<std::vector<int64_t>>& rows,
                           bool end_with_eos, bool end_empty_with_eos,
                           const torch::Device& device) {
  size_t width = 0;
  for (const auto& row : rows) {
    const bool eos = end_with_eos || (end_empty_with_eos && row.empty());
    width = std::max(width, row.size() + (eos ? 1 : 0));
  }
  std::vector<int64_t> flat(rows.size() * width, Vocabulary::kPadId);
  for (size_t r = 0; r < rows.size(); ++r) {
    std::copy(rows[r].begin(), rows[r].end(), flat.begin() + r * width);
    if (end_with_eos || (end_empty_with_eos && rows[r].empty())) {
      flat[r * width + rows[r].size()] = Vocabulary::kEosId;
    }
  }
  return at::tensor(flat, at::kLong)
      .view({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)})
      .to(device);  // [batch, width]
}

}  // namespace

torch::Tensor MakeSourceTensor(const std::vector<std::vector<int64_t>>& sources,
                               const ModelConfig& config,
                               const torch::Device& device) {
  return RowsToTensor(sources, config.source_eos, true, device);
}

torch::Tensor PadRows(const std::vector<std::vector<int64_t>>& rows,
                      const torch::Device& device) {
  return RowsToTensor(rows, false, false, device);
}

std::vector<std::vector<int64_t>> GreedyDecode(
    TransformerImpl& model, const std::vector<std::vector<int64_t>>& sources,
    const DecodingOptions& options) {
  std::vector<EncodedSource> greedy;
  for (const auto& source : sources) greedy.push_back({source, 1});
  return TargetIds(ContinuousDecoder(model, options).DecodeAll(greedy));
}

std::vector<int64_t> GreedyDecodeWithoutCache(
    TransformerImpl& model, const std::vector<int64_t>& source,
    const DecodingOptions& options, bool run_all_steps) {
  c10::InferenceMode inference;
  const torch::Device device = ModelDevice(model);
  // [1, src]
  torch::Tensor source_ids = MakeSourceTensor({source}, model.config(), device);
  torch::Tensor source_mask = PaddingMask(source_ids);
  torch::Tensor memory = model.Encode(source_ids, source_mask);
  const int64_t limit = MaxTargetLength(options, source.size());

  std::vector<int64_t> prefix = {Vocabulary::kBosId};
  while (static_cast<int64_t>(prefix.size()) - 1 < limit) {
    torch::Tensor target_input = PadRows({prefix}, device);  // [1, len]
    // [1, len, d_model] -> logits of the last position, [vocab]
    torch::Tensor hidden = model.DecodeFull(target_input, memory, source_mask);
    const int64_t next =
        at::argmax(model.Generate(hidden[0][-1]), -1).item<int64_t>();
    if (next == Vocabulary::kEosId && !run_all_steps) break;
    prefix.push_back(next);
  }
  const auto end = std::find(prefix.begin() + 1, prefix.end(),
                             static_cast<int64_t>(Vocabulary::kEosId));
  return {prefix.begin() + 1, end};
}

}  // namespace fanyi
