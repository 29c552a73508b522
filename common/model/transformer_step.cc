// TransformerImpl's incremental decoding: StartDecoding and DecodeStep feed
// one token of each row at a time against the caller's DecoderState.
#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "common/model/decoder_layer.h"
#include "common/model/multi_head_attention.h"
#include "common/model/residual_sublayer.h"
#include "common/model/step_graphs.h"
#include "common/model/transformer.h"

namespace fanyi {

torch::Tensor TransformerImpl::EmbedStep(const torch::Tensor& ids,
                                         const torch::Tensor& positions) {
  torch::Tensor scaled = target_embedding_(ids);  // [batch, d_model]
  if (config_.scale_embeddings) {
    scaled = scaled * std::sqrt(double(config_.d_model));
  }
  // An index past the table throws.
  return embedding_dropout_(MaybeNorm(
      target_embedding_norm_, scaled + positions_.index_select(0, positions)));
}

DecoderState TransformerImpl::StartDecoding(const torch::Tensor& memory,
                                            const torch::Tensor& source_mask,
                                            const torch::Tensor& sources) {
  DecoderState state;
  const torch::TensorOptions ids = memory.options().dtype(at::kLong);
  // [batch]: the source of each row.
  state.memory_rows =
      sources.defined() ? sources : at::arange(memory.size(0), ids);
  const int64_t batch = state.memory_rows.size(0);
  // [batch, 1, 1, src_len]
  state.source_bias = AttentionBias(source_mask, memory.scalar_type())
                          .index_select(0, state.memory_rows);
  state.self_bias_storage =
      at::zeros({batch, 1, 1, DecoderState::kInitialColumns}, memory.options());
  state.positions = at::zeros({batch}, ids);
  state.self_rows = at::zeros({batch, DecoderState::kInitialColumns}, ids);
  // Each row's source length, one past its last real position, read back
  // once here so that the steps never read the biases back: [batch].
  const int64_t source_length = source_mask.size(-1);
  const torch::Tensor lengths =
      source_length == 0
          ? at::zeros({batch}, ids.device(at::kCPU))
          : (source_mask.reshape({-1, source_length}).to(at::kLong) *
             at::arange(1, source_length + 1, ids))
                .amax(1)
                .index_select(0, state.memory_rows)
                .to(at::kCPU);
  state.row_source_lengths.assign(lengths.data_ptr<int64_t>(),
                                  lengths.data_ptr<int64_t>() + batch);
  state.row_first_columns.assign(batch, 0);
  state.source_capacity = memory.size(1);
  state.layers.resize(decoder_layers_->size());
  std::vector<std::pair<torch::Tensor, torch::Tensor>> projected(
      decoder_layers_->size());
  if (UsesKernel()) {
    projected = inference_kernel_->MemoryKeysValues(memory);
  } else {
    RequireWeights();
  }
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    decoder_layers_[i]->as<DecoderLayer>()->StartDecoding(
        memory, batch, DecoderState::kInitialColumns, &state.layers[i],
        std::move(projected[i]));
  }
  return state;
}

torch::Tensor TransformerImpl::DecodeStep(const torch::Tensor& last_tokens,
                                          DecoderState* state,
                                          StepGraphs* graphs) {
  if (UsesKernel()) return inference_kernel_->Step(last_tokens, state);
  RequireWeights();
  state->alignment = torch::Tensor();
  const int64_t column = state->AddColumn();
  // [1]: the cache column this step writes.
  const torch::Tensor column_index =
      at::full({1}, column, state->positions.options());
  const std::vector<torch::Tensor> inputs = {
      last_tokens,       state->positions,
      column_index,      state->self_bias_storage,
      state->self_rows,  state->memory_rows,
      state->source_bias};
  torch::Tensor logits;  // [batch, target_vocab]
  if (graphs != nullptr && !state->wants_alignment) {
    // A graph replays on any later step with the same key, so it attends
    // to every column up to the capacity, those past this step's masked.
    logits = graphs->Run(state->CacheLayout(), inputs,
                         [&](const std::vector<torch::Tensor>& captured) {
                           return StepColumns(captured, *state,
                                              state->capacity(), true);
                         });
  } else {
    logits = StepColumns(inputs, *state, state->end_column, false);
  }
  state->positions = state->positions + 1;
  return logits;
}

torch::Tensor TransformerImpl::StepColumns(
    const std::vector<torch::Tensor>& inputs, DecoderState& state,
    int64_t end_column, bool mask_later_columns) {
  const torch::Tensor& last_tokens = inputs[0];        // [batch]
  const torch::Tensor& positions = inputs[1];          // [batch]
  const torch::Tensor& column = inputs[2];             // [1]
  const torch::Tensor& self_bias_storage = inputs[3];  // [batch, 1, 1, cap]
  const torch::Tensor& self_rows_storage = inputs[4];  // [batch, capacity]
  const torch::Tensor& memory_rows = inputs[5];        // [batch]
  const torch::Tensor& source_bias = inputs[6];        // [batch, 1, 1, src_len]
  const int64_t batch = last_tokens.size(0);
  const int64_t first = state.first_column;
  const int64_t columns = end_column - first;
  // Each row sees its own columns, this step's included: [batch, 1, 1,
  // columns].
  torch::Tensor self_bias = self_bias_storage.narrow(3, first, columns);
  if (mask_later_columns) {
    // [columns] bool: true past this step's column (not written yet).
    const torch::Tensor later =
        at::arange(first, end_column, column.options()).gt(column);
    self_bias =
        self_bias.masked_fill(later, -std::numeric_limits<float>::infinity());
  }
  // The cache rows each row reads: [batch, columns] and [batch, src_len].
  const torch::Tensor self_rows = self_rows_storage.narrow(1, first, columns);
  const torch::Tensor source_rows =
      memory_rows.unsqueeze(1).expand({batch, source_bias.size(3)});
  // Rows may be at different positions (they joined at different steps):
  // [batch] -> [batch, 1, d_model].
  torch::Tensor x = EmbedStep(last_tokens, positions).unsqueeze(1);
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    const bool aligns = state.wants_alignment &&
                        static_cast<int64_t>(i) == config_.AlignmentLayer();
    x = decoder_layers_[i]->as<DecoderLayer>()->Step(
        x, source_bias, self_bias, self_rows, source_rows, first, column,
        &state.layers[i], aligns ? &state.alignment : nullptr,
        config_.AlignmentHeads());
  }
  // [batch, target_vocab]
  return Generate(MaybeNorm(decoder_norm_, x)).squeeze(1);
}

}  // namespace fanyi
