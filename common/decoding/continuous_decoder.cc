#include "common/decoding/continuous_decoder.h"

#include <ATen/ops/argmax.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <unordered_set>

#include "common/decoding/greedy_decoder.h"
#include "common/model/decoder_state.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"

namespace fanyi {

// One sentence in the batch; rows[i] is batch row i of `state`.
struct Row {
  int64_t handle;
  int64_t limit;  // Most tokens it may generate.
  std::vector<int64_t> target;
  int64_t last_token = Vocabulary::kBosId;
};

struct ContinuousDecoder::Impl {
  Impl(TransformerImpl& model, const DecodingOptions& options)
      : model(model),
        options(options),
        device(model.parameters().front().device()) {}

  // Removes the rows at `removed` (batch indices, ascending) from rows and
  // state.
  void RemoveRows(const std::vector<int64_t>& removed) {
    if (removed.empty()) return;
    if (removed.size() == rows.size()) {
      rows.clear();
      state = DecoderState();
      return;
    }
    std::vector<Row> kept;
    for (int64_t index : state.RemoveRows(removed)) {
      kept.push_back(std::move(rows[index]));
    }
    rows = std::move(kept);
  }

  TransformerImpl& model;
  const DecodingOptions options;
  const torch::Device device;
  DecoderState state;  // Empty (no layers) while no sentence is active.
  std::vector<Row> rows;
  int64_t next_handle = 0;
};

ContinuousDecoder::ContinuousDecoder(TransformerImpl& model,
                                     const DecodingOptions& options)
    : impl_(std::make_unique<Impl>(model, options)) {}

ContinuousDecoder::~ContinuousDecoder() = default;

std::vector<int64_t> ContinuousDecoder::Add(
    const std::vector<std::vector<int64_t>>& sources) {
  std::vector<int64_t> handles;
  if (sources.empty()) return handles;
  c10::InferenceMode inference;
  // [new, src_len] and [new, 1, 1, src_len]
  torch::Tensor source_ids = MakeSourceTensor(sources, impl_->device);
  torch::Tensor source_mask = PaddingMask(source_ids);
  impl_->state.Append(impl_->model.StartDecoding(
      impl_->model.Encode(source_ids, source_mask), source_mask));
  for (const auto& source : sources) {
    const int64_t handle = impl_->next_handle++;
    handles.push_back(handle);
    impl_->rows.push_back(
        {handle, MaxTargetLength(impl_->options, source.size()), {}});
  }
  return handles;
}

std::vector<ContinuousDecoder::Finished> ContinuousDecoder::Step() {
  std::vector<Finished> finished;
  std::vector<Row>& rows = impl_->rows;
  if (rows.empty()) return finished;
  c10::InferenceMode inference;
  std::vector<int64_t> last_tokens;
  for (const Row& row : rows) last_tokens.push_back(row.last_token);
  // [batch, vocab] -> [batch]
  torch::Tensor next = at::argmax(
      impl_->model.DecodeStep(
          at::tensor(last_tokens, at::kLong).to(impl_->device), &impl_->state),
      -1);
  torch::Tensor next_cpu = next.to(at::kCPU);
  const int64_t* next_ids = next_cpu.data_ptr<int64_t>();

  std::vector<int64_t> ended_rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    Row& row = rows[i];
    const bool ended = next_ids[i] == Vocabulary::kEosId;
    if (!ended) {
      row.target.push_back(next_ids[i]);
      row.last_token = next_ids[i];
    }
    if (ended || static_cast<int64_t>(row.target.size()) >= row.limit) {
      finished.push_back({row.handle, std::move(row.target)});
      ended_rows.push_back(static_cast<int64_t>(i));
    }
  }
  impl_->RemoveRows(ended_rows);
  return finished;
}

void ContinuousDecoder::Remove(const std::vector<int64_t>& handles) {
  const std::unordered_set<int64_t> dropped(handles.begin(), handles.end());
  std::vector<int64_t> removed;
  for (size_t i = 0; i < impl_->rows.size(); ++i) {
    if (dropped.count(impl_->rows[i].handle)) {
      removed.push_back(static_cast<int64_t>(i));
    }
  }
  c10::InferenceMode inference;
  impl_->RemoveRows(removed);
}

int64_t ContinuousDecoder::active() const {
  return static_cast<int64_t>(impl_->rows.size());
}

}  // namespace fanyi
