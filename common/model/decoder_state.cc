#include "common/model/decoder_state.h"

#include <ATen/ops/any.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace fanyi {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

// `tensor` grown to `size` along `dim` with entries equal to `fill`, placed
// after the existing entries.
torch::Tensor PadAtEnd(const torch::Tensor& tensor, int64_t dim, int64_t size,
                       float fill) {
  const int64_t missing = size - tensor.size(dim);
  if (missing <= 0) return tensor;
  std::vector<int64_t> shape = tensor.sizes().vec();
  shape[dim] = missing;
  return at::cat({tensor, at::full(shape, fill, tensor.options())}, dim);
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

// Whether any row may attend to each column of `bias` [batch, 1, 1, len]:
// [len] bool.
torch::Tensor UsedColumns(const torch::Tensor& bias) {
  return at::any(bias.eq(0).flatten(1), 0);
}

// A copy of storage columns [first, first + columns) of `storage`
// [batch, ..., capacity, ...] (columns along `dim`) at columns
// [offset, offset + columns) of `target`, rows [row, row + batch).
void CopyColumns(const torch::Tensor& storage, int64_t dim, int64_t first,
                 int64_t columns, const torch::Tensor& target, int64_t row,
                 int64_t offset) {
  target.narrow(0, row, storage.size(0))
      .narrow(dim, offset, columns)
      .copy_(storage.narrow(dim, first, columns));
}

// A buffer for `rows` rows of a layer cache tensor like `like`
// [batch, heads, ·, d_k], with `size` columns or source positions:
// [rows, heads, size, d_k]. Uninitialised: the state writes what its views
// show.
torch::Tensor NewBuffer(const torch::Tensor& like, int64_t rows, int64_t size) {
  return at::empty({rows, like.size(1), size, like.size(3)}, like.options());
}

// The first `rows` rows and `size` columns (dimension 2) of the buffer whose
// beginning `view` [batch, heads, ·, d_k] is: the view widened over spare
// entries. as_strided checks that the buffer holds them.
torch::Tensor Widened(const torch::Tensor& view, int64_t rows, int64_t size) {
  return view.as_strided({rows, view.size(1), size, view.size(3)},
                         view.strides(), view.storage_offset());
}

// Drops the cache columns before the oldest row of `state` joined and the
// source positions past its longest source: padding for every row.
void DropUnusedColumns(DecoderState& state) {
  state.first_column += UsedRange(UsedColumns(state.self_bias())).first;
  const int64_t source_length = state.source_bias.size(3);
  const int64_t end_source = UsedRange(UsedColumns(state.source_bias)).second;
  if (end_source == source_length) return;
  state.source_bias = state.source_bias.narrow(3, 0, end_source);
  for (DecoderLayerCache& layer : state.layers) {
    layer.memory_keys = layer.memory_keys.narrow(2, 0, end_source);
    layer.memory_values = layer.memory_values.narrow(2, 0, end_source);
  }
}

}  // namespace

int64_t DecoderState::batch_size() const { return positions.size(0); }

torch::Tensor DecoderState::self_bias() const {
  return self_bias_storage.narrow(3, first_column, columns());
}

int64_t DecoderState::AddColumn() {
  const int64_t capacity = self_bias_storage.size(3);
  if (end_column == capacity) {
    const int64_t used = columns();
    const int64_t grown = std::max(2 * used, kInitialColumns);
    // The spare rows stay, so that admissions still find room.
    const int64_t buffer_rows = row_capacity > 0 ? row_capacity : batch_size();
    for (DecoderLayerCache& layer : layers) {
      for (torch::Tensor* storage :
           {&layer.key_storage, &layer.value_storage}) {
        // Spare columns are written by the steps before any step reads them.
        torch::Tensor moved =
            NewBuffer(*storage, buffer_rows, grown).narrow(0, 0, batch_size());
        CopyColumns(*storage, 2, first_column, used, moved, 0, 0);
        *storage = moved;
      }
    }
    torch::Tensor bias =
        at::zeros({batch_size(), 1, 1, grown}, self_bias_storage.options());
    CopyColumns(self_bias_storage, 3, first_column, used, bias, 0, 0);
    self_bias_storage = bias;
    first_column = 0;
    end_column = used;
  }
  return end_column++;
}

void DecoderState::ReorderRows(const std::vector<int64_t>& order) {
  const auto rows = static_cast<int64_t>(order.size());
  if (rows > batch_size()) {
    throw std::invalid_argument("ReorderRows: " + std::to_string(rows) +
                                " rows asked of a batch of " +
                                std::to_string(batch_size()));
  }
  std::vector<int64_t> to;
  std::vector<int64_t> from;
  for (int64_t i = 0; i < rows; ++i) {
    if (order[i] != i) {
      to.push_back(i);
      from.push_back(order[i]);
    }
  }
  if (2 * to.size() > order.size()) {
    // Most rows change (beams reordering every step): one gather of every
    // row costs less than gathering the changed rows and copying them back.
    // The caches go into buffers of the same capacity, only their entries
    // in use copied, so that admissions still find room.
    const torch::Tensor all_rows =
        at::tensor(order, at::kLong).to(positions.device());
    auto gather = [&](torch::Tensor& tensor) {
      tensor = tensor.index_select(0, all_rows);
    };
    gather(source_bias);
    gather(self_bias_storage);
    gather(positions);
    const int64_t buffer_rows = std::max(row_capacity, batch_size());
    const int64_t source_length = source_bias.size(3);
    const int64_t buffer_source = std::max(source_capacity, source_length);
    const int64_t used = columns();
    for (DecoderLayerCache& layer : layers) {
      for (torch::Tensor* storage :
           {&layer.key_storage, &layer.value_storage}) {
        // [rows, heads, capacity, d_k]; spare columns are written by the
        // steps before any step reads them.
        torch::Tensor gathered =
            NewBuffer(*storage, buffer_rows, storage->size(2))
                .narrow(0, 0, rows);
        torch::Tensor columns_in_use = gathered.narrow(2, first_column, used);
        at::index_select_out(columns_in_use,
                             storage->narrow(2, first_column, used), 0,
                             all_rows);
        *storage = gathered;
      }
      for (torch::Tensor* memory : {&layer.memory_keys, &layer.memory_values}) {
        // [rows, heads, src_len, d_k]
        torch::Tensor gathered = NewBuffer(*memory, buffer_rows, buffer_source)
                                     .narrow(0, 0, rows)
                                     .narrow(2, 0, source_length);
        at::index_select_out(gathered, *memory, 0, all_rows);
        *memory = gathered;
      }
    }
    row_capacity = buffer_rows;
    source_capacity = buffer_source;
  } else {
    const torch::Tensor to_rows =
        at::tensor(to, at::kLong).to(positions.device());
    const torch::Tensor from_rows =
        at::tensor(from, at::kLong).to(positions.device());
    // Copies rows `from` of `tensor` to rows `to` in place (index_select
    // reads every source row before any is overwritten) and keeps the first
    // `rows` (a view: the storage stays, so nothing else is copied).
    auto move_rows = [&](torch::Tensor& tensor) {
      if (!to.empty()) {
        tensor.index_copy_(0, to_rows, tensor.index_select(0, from_rows));
      }
      tensor = tensor.narrow(0, 0, rows);
    };
    move_rows(source_bias);
    move_rows(self_bias_storage);
    move_rows(positions);
    for (DecoderLayerCache& layer : layers) {
      for (torch::Tensor* storage :
           {&layer.key_storage, &layer.value_storage}) {
        // Only the columns in use: spare ones are written before being read.
        torch::Tensor used = storage->narrow(2, first_column, columns());
        move_rows(used);
        *storage = storage->narrow(0, 0, rows);
      }
      move_rows(layer.memory_keys);
      move_rows(layer.memory_values);
    }
  }
  if (rows > 0) DropUnusedColumns(*this);
}

std::vector<int64_t> DecoderState::RemoveRows(
    const std::vector<int64_t>& removed) {
  std::vector<int64_t> order(batch_size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  // From the highest removed row down, so the last row is never one still
  // to be removed.
  for (auto it = removed.rbegin(); it != removed.rend(); ++it) {
    order[*it] = order.back();
    order.pop_back();
  }
  ReorderRows(order);
  return order;
}

void DecoderState::Append(const DecoderState& other) {
  if (other.columns() != 0) {
    throw std::invalid_argument(
        "Append takes rows that have decoded nothing yet; these have " +
        std::to_string(other.columns()) + " cache columns");
  }
  if (layers.empty()) {
    *this = other;
    return;
  }
  if (other.layers.size() != layers.size()) {
    throw std::invalid_argument(
        "Append takes rows of a model with " + std::to_string(layers.size()) +
        " decoder layers; these have " + std::to_string(other.layers.size()));
  }
  const int64_t kept = batch_size();
  const int64_t added = other.batch_size();
  const int64_t rows = kept + added;
  const int64_t kept_source = source_bias.size(3);
  const int64_t added_source = other.source_bias.size(3);
  const int64_t source_length = std::max(kept_source, added_source);
  const int64_t used = columns();
  const bool has_room =
      rows <= row_capacity && source_length <= source_capacity;
  // Everything goes into `merged` first: into entries that no view of this
  // state shows (spare rows, spare source positions) or into new buffers.
  // Only the final move touches this.
  DecoderState merged;
  merged.layers.resize(layers.size());
  if (has_room) {
    merged.row_capacity = row_capacity;
    merged.source_capacity = source_capacity;
    merged.first_column = first_column;
    merged.end_column = end_column;
  } else {
    // Room for as many rows again, and sources twice as long, so that most
    // admissions after this one write only their own rows. The columns in
    // use move to the front of storages with room to grow: storages that
    // only ever doubled would otherwise keep every column that rows now gone
    // once used, and each later copy would carry them.
    merged.row_capacity = 2 * rows;
    merged.source_capacity = 2 * source_length;
    merged.first_column = 0;
    merged.end_column = used;
  }
  const int64_t capacity = has_room ? self_bias_storage.size(3)
                                    : std::max(2 * used, kInitialColumns);
  // The new rows own none of the columns in use: -inf there, 0 on the spare
  // ones they will write. Small: built whole.
  torch::Tensor added_bias =
      at::zeros({added, 1, 1, capacity}, self_bias_storage.options());
  added_bias.narrow(3, merged.first_column, used).fill_(kMinusInfinity);
  if (has_room) {
    merged.self_bias_storage = at::cat({self_bias_storage, added_bias});
  } else {
    torch::Tensor kept_bias =
        at::zeros({kept, 1, 1, capacity}, self_bias_storage.options());
    CopyColumns(self_bias_storage, 3, first_column, used, kept_bias, 0, 0);
    merged.self_bias_storage = at::cat({kept_bias, added_bias});
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const DecoderLayerCache& mine = layers[i];
    const DecoderLayerCache& theirs = other.layers[i];
    DecoderLayerCache& layer = merged.layers[i];
    for (auto storage :
         {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage}) {
      // [rows, heads, capacity, d_k]
      torch::Tensor& merged_storage = layer.*storage;
      if (has_room) {
        merged_storage = Widened(mine.*storage, rows, capacity);
      } else {
        merged_storage = NewBuffer(mine.*storage, merged.row_capacity, capacity)
                             .narrow(0, 0, rows);
        CopyColumns(mine.*storage, 2, first_column, used, merged_storage, 0, 0);
      }
      // The new rows' columns in use are zeroed (finite, so that their -inf
      // bias gives them exactly zero weight). Spare columns are written by
      // the steps before any step reads them.
      merged_storage.narrow(0, kept, added)
          .narrow(2, merged.first_column, used)
          .zero_();
    }
    for (auto memory :
         {&DecoderLayerCache::memory_keys, &DecoderLayerCache::memory_values}) {
      // [rows, heads, src_len, d_k]
      torch::Tensor& merged_memory = layer.*memory;
      if (has_room) {
        merged_memory = Widened(mine.*memory, rows, source_length);
      } else {
        merged_memory =
            NewBuffer(mine.*memory, merged.row_capacity, merged.source_capacity)
                .narrow(0, 0, rows)
                .narrow(2, 0, source_length);
        merged_memory.narrow(0, 0, kept)
            .narrow(2, 0, kept_source)
            .copy_(mine.*memory);
      }
      merged_memory.narrow(0, kept, added)
          .narrow(2, 0, added_source)
          .copy_(theirs.*memory);
      // Padding: finite (its bias is -inf), so that no NaN from a spare
      // entry reaches the attention's sums.
      merged_memory.narrow(0, 0, kept)
          .narrow(2, kept_source, source_length - kept_source)
          .zero_();
      merged_memory.narrow(0, kept, added)
          .narrow(2, added_source, source_length - added_source)
          .zero_();
    }
  }
  merged.source_bias =
      at::cat({PadAtEnd(source_bias, 3, source_length, kMinusInfinity),
               PadAtEnd(other.source_bias, 3, source_length, kMinusInfinity)});
  merged.positions = at::cat({positions, other.positions}, 0);
  *this = std::move(merged);
}

}  // namespace fanyi
