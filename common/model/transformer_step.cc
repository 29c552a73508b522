// TransformerImpl's incremental decoding: StartDecoding and DecodeStep feed
// one token of each row at a time against the caller's DecoderState.
#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "common/model/cache_storage.h"
#include "common/model/decoder_layer.h"
#include "common/model/multi_head_attention.h"
#include "common/model/residual_sublayer.h"
#include "common/model/step_graphs.h"
#include "common/model/transformer.h"

namespace fanyi {
namespace {

// What a CUDA graph's step computes for `size` rows (or source positions)
// when the caches hold `room`: the next power of two, but no more than the
// room (each computed row writes its column into the cache row of its
// index; the memory buffers hold `room` source positions), so that a batch
// whose rows and sources come and go keeps its graph until it crosses a
// power of two.
int64_t GraphSize(int64_t size, int64_t room) {
  int64_t padded = 1;
  while (padded < size) padded *= 2;
  return std::max(size, std::min(padded, room));
}

// `input` [batch, ...] followed by copies of its first row: [rows, ...]. A
// copy of a real row computes finite values, so what the padding rows write
// into the spare cache rows (at this step's column only) is never NaN, which
// would spread through the masked columns that read it.
torch::Tensor PadWithFirstRow(const torch::Tensor& input, int64_t rows) {
  const int64_t batch = input.size(0);
  if (rows == batch) return input;
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = rows - batch;
  return at::cat({input, input.narrow(0, 0, 1).expand(shape)});
}

}  // namespace

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
  // [1] each: the cache column this step writes, and the first in use. (A
  // fill on the device each: a copy from the host would wait for it.)
  const torch::Tensor column_index =
      at::full({1}, column, state->positions.options());
  const torch::Tensor first_index =
      at::full({1}, state->first_column, state->positions.options());
  const std::vector<torch::Tensor> inputs = {
      last_tokens,        state->positions,
      column_index,       state->self_bias_storage,
      state->self_rows,   state->memory_rows,
      state->source_bias, first_index};
  torch::Tensor logits;  // [batch, target_vocab]
  if (graphs != nullptr && !state->wants_alignment && state->batch_size() > 0) {
    // A graph replays on any later step with the same key: the caches'
    // layout and the inputs' shapes. So it attends to every column of the
    // storages (those before the first in use and past this step's are
    // masked, as are those before a row's own), and computes the batch
    // padded to GraphRows, so that neither the first column in use nor a
    // row leaving or joining changes its key.
    const int64_t batch = state->batch_size();
    const int64_t rows = GraphSize(batch, state->cache_rows());
    std::vector<torch::Tensor> padded;
    for (size_t i = 0; i < inputs.size(); ++i) {
      // Not the column indices, [1].
      const bool index = i == 2 || i == 7;
      padded.push_back(index ? inputs[i] : PadWithFirstRow(inputs[i], rows));
    }
    // The source positions past every row's source are hidden: [rows, 1, 1,
    // source width]. StepColumns reads the memory buffers that far.
    padded[6] = cache_storage::PadAtEnd(
        padded[6], 3,
        GraphSize(state->source_bias.size(3), state->source_capacity),
        -std::numeric_limits<float>::infinity());
    logits = graphs
                 ->Run(state->CacheLayout(), padded,
                       [&](const std::vector<torch::Tensor>& captured) {
                         return StepColumns(captured, *state, 0,
                                            state->capacity(), true);
                       })
                 .narrow(0, 0, batch);  // [batch, target_vocab]
  } else {
    logits = StepColumns(inputs, *state, state->first_column, state->end_column,
                         false);
  }
  state->positions = state->positions + 1;
  return logits;
}

torch::Tensor TransformerImpl::StepColumns(
    const std::vector<torch::Tensor>& inputs, DecoderState& state,
    int64_t first_column, int64_t end_column, bool mask_later_columns) {
  const torch::Tensor& last_tokens = inputs[0];        // [batch]
  const torch::Tensor& positions = inputs[1];          // [batch]
  const torch::Tensor& column = inputs[2];             // [1]
  const torch::Tensor& self_bias_storage = inputs[3];  // [batch, 1, 1, cap]
  const torch::Tensor& self_rows_storage = inputs[4];  // [batch, capacity]
  const torch::Tensor& memory_rows = inputs[5];        // [batch]
  const torch::Tensor& source_bias = inputs[6];        // [batch, 1, 1, src_len]
  const torch::Tensor& first_in_use = inputs[7];       // [1]
  const int64_t batch = last_tokens.size(0);
  const int64_t first = first_column;
  const int64_t columns = end_column - first;
  // Each row sees its own columns, this step's included: [batch, 1, 1,
  // columns].
  torch::Tensor self_bias = self_bias_storage.narrow(3, first, columns);
  if (mask_later_columns) {
    // [columns] bool: true past this step's column (not written yet), and
    // before the first column in use (no row's; a row that joined later
    // has 0 there in its bias).
    const torch::Tensor index = at::arange(first, end_column, column.options());
    const torch::Tensor hidden =
        index.gt(column).logical_or(index.lt(first_in_use));
    self_bias =
        self_bias.masked_fill(hidden, -std::numeric_limits<float>::infinity());
  }
  // The cache rows each row reads: [batch, columns] and [batch, src_len].
  const torch::Tensor self_rows = self_rows_storage.narrow(1, first, columns);
  const int64_t source_width = source_bias.size(3);
  const torch::Tensor source_rows =
      memory_rows.unsqueeze(1).expand({batch, source_width});
  // Rows may be at different positions (they joined at different steps):
  // [batch] -> [batch, 1, d_model].
  torch::Tensor x = EmbedStep(last_tokens, positions).unsqueeze(1);
  for (size_t i = 0; i < decoder_layers_->size(); ++i) {
    const bool aligns = state.wants_alignment &&
                        static_cast<int64_t>(i) == config_.AlignmentLayer();
    DecoderLayerCache* cache = &state.layers[i];
    // A graph's sources are padded past the memory views (GraphSize):
    // views of the same buffers that far, [memory rows, heads, width, d_k].
    DecoderLayerCache widened;
    if (cache->memory_keys.size(2) != source_width) {
      widened = *cache;
      widened.memory_keys =
          cache_storage::Widened(cache->memory_keys, source_width);
      widened.memory_values =
          cache_storage::Widened(cache->memory_values, source_width);
      cache = &widened;
    }
    x = decoder_layers_[i]->as<DecoderLayer>()->Step(
        x, source_bias, self_bias, self_rows, source_rows, first, column, cache,
        aligns ? &state.alignment : nullptr, config_.AlignmentHeads());
  }
  // [batch, target_vocab]
  return Generate(MaybeNorm(decoder_norm_, x)).squeeze(1);
}

}  // namespace fanyi
