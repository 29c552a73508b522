#include "common/greedy_decoder.h"

#include <ATen/ops/argmax.h>
#include <ATen/ops/full.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "common/vocabulary.h"

namespace fanyi {
namespace {

torch::Device ModelDevice(TransformerImpl& model) {
  return model.parameters().front().device();
}

torch::Tensor RowsToTensor(const std::vector<std::vector<int64_t>>& rows,
                           int64_t suffix, const torch::Device& device) {
  size_t width = 0;
  for (const auto& row : rows) width = std::max(width, row.size());
  if (suffix >= 0) ++width;
  std::vector<int64_t> flat(rows.size() * width, Vocabulary::kPadId);
  for (size_t r = 0; r < rows.size(); ++r) {
    std::copy(rows[r].begin(), rows[r].end(), flat.begin() + r * width);
    if (suffix >= 0) flat[r * width + rows[r].size()] = suffix;
  }
  return at::tensor(flat, at::kLong)
      .view({static_cast<int64_t>(rows.size()), static_cast<int64_t>(width)})
      .to(device);  // [batch, width]
}

}  // namespace

int64_t MaxTargetLength(const DecodingOptions& options, int64_t source_length) {
  const auto scaled =
      static_cast<int64_t>(std::floor(options.length_ratio * source_length)) +
      options.length_offset;
  return std::max<int64_t>(1, std::min(options.max_length, scaled));
}

torch::Tensor MakeSourceTensor(const std::vector<std::vector<int64_t>>& sources,
                               const torch::Device& device) {
  return RowsToTensor(sources, Vocabulary::kEosId, device);
}

torch::Tensor PadRows(const std::vector<std::vector<int64_t>>& rows,
                      const torch::Device& device) {
  return RowsToTensor(rows, -1, device);
}

std::vector<std::vector<int64_t>> GreedyDecode(
    TransformerImpl& model, const std::vector<std::vector<int64_t>>& sources,
    const DecodingOptions& options) {
  std::vector<std::vector<int64_t>> targets(sources.size());
  if (sources.empty()) return targets;
  c10::InferenceMode inference;
  const torch::Device device = ModelDevice(model);

  torch::Tensor source_ids = MakeSourceTensor(sources, device);  // [b, src]
  torch::Tensor source_mask = PaddingMask(source_ids);  // [b, 1, 1, src]
  DecoderState state =
      model.StartDecoding(model.Encode(source_ids, source_mask), source_mask);

  // active[i] is the input row that batch row i decodes.
  std::vector<int64_t> active(sources.size());
  std::vector<int64_t> limits(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    active[i] = static_cast<int64_t>(i);
    limits[i] = MaxTargetLength(options, sources[i].size());
  }
  // [batch]
  torch::Tensor last_tokens =
      at::full({static_cast<int64_t>(sources.size())}, Vocabulary::kBosId,
               at::TensorOptions(at::kLong).device(device));
  while (!active.empty()) {
    // [batch, vocab] -> [batch]
    torch::Tensor next = at::argmax(model.DecodeStep(last_tokens, &state), -1);
    torch::Tensor next_cpu = next.to(at::kCPU);
    const int64_t* next_ids = next_cpu.data_ptr<int64_t>();

    std::vector<int64_t> keep;
    std::vector<int64_t> still_active;
    for (size_t i = 0; i < active.size(); ++i) {
      const int64_t row = active[i];
      if (next_ids[i] == Vocabulary::kEosId) continue;
      targets[row].push_back(next_ids[i]);
      if (static_cast<int64_t>(targets[row].size()) >= limits[row]) continue;
      keep.push_back(static_cast<int64_t>(i));
      still_active.push_back(row);
    }
    if (keep.size() != active.size() && !keep.empty()) {
      // Finished rows leave the batch instead of being computed to the end.
      torch::Tensor rows = at::tensor(keep, at::kLong).to(device);
      state.SelectRows(rows);
      next = next.index_select(0, rows);
    }
    active = std::move(still_active);
    last_tokens = next;
  }
  return targets;
}

std::vector<int64_t> GreedyDecodeWithoutCache(
    TransformerImpl& model, const std::vector<int64_t>& source,
    const DecodingOptions& options) {
  c10::InferenceMode inference;
  const torch::Device device = ModelDevice(model);
  torch::Tensor source_ids = MakeSourceTensor({source}, device);  // [1, src]
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
    if (next == Vocabulary::kEosId) break;
    prefix.push_back(next);
  }
  return {prefix.begin() + 1, prefix.end()};
}

}  // namespace fanyi
