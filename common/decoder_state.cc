#include "common/decoder_state.h"

#include <ATen/ops/any.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/zeros.h>

namespace fanyi {
namespace {

// `tensor` grown to `size` along `dim` with zeros (false), placed after the
// existing entries (`at_end`) or before them.
torch::Tensor Pad(const torch::Tensor& tensor, int64_t dim, int64_t size,
                  bool at_end) {
  const int64_t missing = size - tensor.size(dim);
  if (missing <= 0) return tensor;
  std::vector<int64_t> shape = tensor.sizes().vec();
  shape[dim] = missing;
  torch::Tensor padding = at::zeros(shape, tensor.options());
  return at_end ? at::cat({tensor, padding}, dim)
                : at::cat({padding, tensor}, dim);
}

// Index of the first (or one past the last) true entry of a 1-D bool tensor.
std::pair<int64_t, int64_t> UsedRange(const torch::Tensor& used) {
  torch::Tensor flags = used.to(at::kCPU);
  const bool* data = flags.data_ptr<bool>();
  const int64_t size = flags.numel();
  int64_t begin = 0;
  while (begin < size && !data[begin]) ++begin;
  int64_t end = size;
  while (end > begin && !data[end - 1]) --end;
  return {begin, end};
}

}  // namespace

int64_t DecoderState::batch_size() const { return positions.size(0); }

void DecoderState::SelectRows(const torch::Tensor& rows) {
  source_mask = source_mask.index_select(0, rows);
  self_mask = self_mask.index_select(0, rows);
  positions = positions.index_select(0, rows);
  // Columns before the oldest remaining row joined, and source positions
  // past the longest remaining source, are padding for every row.
  const int64_t first_column =
      UsedRange(at::any(self_mask.flatten(1), 0)).first;
  const int64_t end_source =
      UsedRange(at::any(source_mask.flatten(1), 0)).second;
  const int64_t columns = self_mask.size(3);
  const int64_t source_length = source_mask.size(3);
  const bool trim_columns = first_column > 0 && rows.numel() > 0;
  const bool trim_source = end_source < source_length && rows.numel() > 0;
  if (trim_columns) self_mask = self_mask.slice(3, first_column, columns);
  if (trim_source) source_mask = source_mask.slice(3, 0, end_source);
  for (DecoderLayerCache& layer : layers) {
    layer.self_keys = layer.self_keys.index_select(0, rows);
    layer.self_values = layer.self_values.index_select(0, rows);
    layer.memory_keys = layer.memory_keys.index_select(0, rows);
    layer.memory_values = layer.memory_values.index_select(0, rows);
    if (trim_columns) {
      layer.self_keys = layer.self_keys.slice(2, first_column, columns);
      layer.self_values = layer.self_values.slice(2, first_column, columns);
    }
    if (trim_source) {
      layer.memory_keys = layer.memory_keys.slice(2, 0, end_source);
      layer.memory_values = layer.memory_values.slice(2, 0, end_source);
    }
  }
}

void DecoderState::Append(const DecoderState& other) {
  if (layers.empty()) {
    *this = other;
    return;
  }
  const int64_t source_length =
      std::max(source_mask.size(3), other.source_mask.size(3));
  const int64_t columns = std::max(self_mask.size(3), other.self_mask.size(3));
  // Sources are padded at the end; caches at the front, since every row's
  // newest column is the last one.
  auto merge = [](const torch::Tensor& a, const torch::Tensor& b, int64_t dim,
                  int64_t size, bool at_end) {
    return at::cat({Pad(a, dim, size, at_end), Pad(b, dim, size, at_end)}, 0);
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    DecoderLayerCache& mine = layers[i];
    const DecoderLayerCache& theirs = other.layers[i];
    mine.memory_keys =
        merge(mine.memory_keys, theirs.memory_keys, 2, source_length, true);
    mine.memory_values =
        merge(mine.memory_values, theirs.memory_values, 2, source_length, true);
    mine.self_keys = merge(mine.self_keys, theirs.self_keys, 2, columns, false);
    mine.self_values =
        merge(mine.self_values, theirs.self_values, 2, columns, false);
  }
  source_mask = merge(source_mask, other.source_mask, 3, source_length, true);
  self_mask = merge(self_mask, other.self_mask, 3, columns, false);
  positions = at::cat({positions, other.positions}, 0);
}

}  // namespace fanyi
