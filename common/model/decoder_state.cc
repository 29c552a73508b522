#include "common/model/decoder_state.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/model/cache_storage.h"
#include "common/model/single_query_attention.h"

namespace fanyi {
namespace {

// The attention bias of a column a row does not see.
constexpr float kHidden = -std::numeric_limits<float>::infinity();

// A new buffer of `cache_rows` rows and `capacity` columns holding each row
// of `state`'s columns in use of `storage` [·, heads, ·, d_k] (read through
// its table) at the front of the row's own cache row: [cache_rows, heads,
// capacity, d_k]. The rest is zero.
torch::Tensor ColumnsInOwnRows(const DecoderState& state,
                               const torch::Tensor& storage, int64_t cache_rows,
                               int64_t capacity) {
  torch::Tensor moved = cache_storage::NewBuffer(storage, cache_rows, capacity);
  moved.narrow(0, 0, state.batch_size())
      .narrow(2, 0, state.columns())
      .copy_(GatherCacheRows(
          storage.narrow(2, state.first_column, state.columns()),
          state.self_rows_in_use()));
  return moved;
}

// Drops the cache columns before the oldest row of `state` joined and the
// source positions past its longest source: padding for every row. Reads
// the rows' records on the host, not their biases.
void DropUnusedColumns(DecoderState& state) {
  const std::vector<int64_t>& firsts = state.row_first_columns;
  const std::vector<int64_t>& lengths = state.row_source_lengths;
  state.first_column =
      std::max(state.first_column,
               std::min(*std::min_element(firsts.begin(), firsts.end()),
                        state.end_column));
  const int64_t source_length = state.source_bias.size(3);
  const int64_t end_source = std::min(
      source_length, *std::max_element(lengths.begin(), lengths.end()));
  if (end_source == source_length) return;
  state.source_bias = state.source_bias.narrow(3, 0, end_source);
  for (DecoderLayerCache& layer : state.layers) {
    layer.memory_keys = layer.memory_keys.narrow(2, 0, end_source);
    layer.memory_values = layer.memory_values.narrow(2, 0, end_source);
  }
}

}  // namespace

int64_t DecoderState::batch_size() const { return positions.size(0); }

int64_t DecoderState::cache_rows() const {
  return layers.empty() ? 0 : layers.front().key_storage.size(0);
}

std::vector<int64_t> DecoderState::CacheLayout() const {
  std::vector<int64_t> layout = {source_capacity};
  for (const DecoderLayerCache& layer : layers) {
    for (const torch::Tensor* cache :
         {&layer.key_storage, &layer.value_storage, &layer.memory_keys,
          &layer.memory_values}) {
      layout.push_back(reinterpret_cast<intptr_t>(cache->data_ptr()));
      std::vector<int64_t> sizes = cache->sizes().vec();
      // A graph reads the memory buffers to a width its inputs give
      // (the source bias's), not the views' own.
      if (cache == &layer.memory_keys || cache == &layer.memory_values) {
        sizes[2] = 0;
      }
      layout.insert(layout.end(), sizes.begin(), sizes.end());
      layout.insert(layout.end(), cache->strides().begin(),
                    cache->strides().end());
    }
  }
  return layout;
}

torch::Tensor DecoderState::self_bias() const {
  return self_bias_storage.narrow(3, first_column, columns());
}

torch::Tensor DecoderState::self_rows_in_use() const {
  return self_rows.narrow(1, first_column, columns());
}

void DecoderState::MoveToOwnRows(int64_t rows, int64_t capacity) {
  const int64_t used = columns();
  for (DecoderLayerCache& layer : layers) {
    for (torch::Tensor* storage : {&layer.key_storage, &layer.value_storage}) {
      *storage = ColumnsInOwnRows(*this, *storage, rows, capacity);
    }
  }
  self_rows =
      cache_storage::OwnRows(batch_size(), capacity, self_rows.options());
  self_bias_storage =
      cache_storage::MovedBias(self_bias_storage, first_column, used, capacity);
  row_first_columns =
      cache_storage::Shifted(std::move(row_first_columns), first_column);
  first_column = 0;
  end_column = used;
}

int64_t DecoderState::AddColumn() {
  const int64_t batch = batch_size();
  if (end_column == capacity()) {
    MoveToOwnRows(cache_rows(), std::max(2 * columns(), kInitialColumns));
  }
  // Row r writes the new column into cache row r. (An empty batch has no
  // storage: its data pointer is null, and no offset may be added to it.)
  if (batch > 0 && self_rows.device().is_cpu()) {
    int64_t* entry =
        self_rows.data_ptr<int64_t>() + end_column * self_rows.stride(1);
    for (int64_t r = 0; r < batch; ++r) entry[r * self_rows.stride(0)] = r;
  } else if (batch > 0) {
    self_rows.select(1, end_column)
        .copy_(at::arange(batch, self_rows.options()));
  }
  return end_column++;
}

void DecoderState::ReorderRows(const std::vector<int64_t>& order) {
  const auto rows = static_cast<int64_t>(order.size());
  for (int64_t row : order) {
    if (row < 0 || row >= batch_size()) {
      throw std::invalid_argument("ReorderRows: row " + std::to_string(row) +
                                  " asked of a batch of " +
                                  std::to_string(batch_size()));
    }
  }
  if (row_first_columns.size() != size_t(batch_size()) ||
      row_source_lengths.size() != size_t(batch_size())) {
    throw std::logic_error("ReorderRows: the rows' records on the host (" +
                           std::to_string(row_first_columns.size()) + ", " +
                           std::to_string(row_source_lengths.size()) +
                           ") do not match a batch of " +
                           std::to_string(batch_size()));
  }
  // More rows than the caches hold (beams fanning out from one row): each
  // row writes its next column into its own cache row, so they grow first,
  // with room for as many rows again.
  if (rows > cache_rows()) {
    MoveToOwnRows(2 * rows, capacity());
  }
  const torch::Tensor index =
      at::tensor(order, at::kLong).to(positions.device());
  for (torch::Tensor* per_row : {&source_bias, &self_bias_storage, &positions,
                                 &self_rows, &memory_rows}) {
    *per_row = per_row->index_select(0, index);
  }
  for (std::vector<int64_t>* per_row :
       {&row_first_columns, &row_source_lengths}) {
    std::vector<int64_t> reordered;
    reordered.reserve(order.size());
    for (int64_t row : order) reordered.push_back((*per_row)[row]);
    *per_row = std::move(reordered);
  }
  if (rows > 0) DropUnusedColumns(*this);
}

void DecoderState::PermuteRows(const torch::Tensor& order) {
  // The rows that take each other's places differ in their tables only.
  self_rows = self_rows.index_select(0, order);
}

void DecoderState::DropRows() {
  ReorderRows({});
  first_column = 0;
  end_column = 0;
  // No source is left: the next rows' sources set the width, not the old.
  source_bias = source_bias.narrow(3, 0, 0);
  for (DecoderLayerCache& layer : layers) {
    layer.memory_keys = layer.memory_keys.narrow(2, 0, 0);
    layer.memory_values = layer.memory_values.narrow(2, 0, 0);
  }
  alignment = torch::Tensor();
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
  if (other.row_first_columns.size() != size_t(other.batch_size()) ||
      other.row_source_lengths.size() != size_t(other.batch_size())) {
    throw std::invalid_argument(
        "Append takes rows with their records on the host; these have " +
        std::to_string(other.row_source_lengths.size()) + " for " +
        std::to_string(other.batch_size()) + " rows");
  }
  if (other.layers.size() != layers.size()) {
    throw std::invalid_argument(
        "Append takes rows of a model with " + std::to_string(layers.size()) +
        " decoder layers; these have " + std::to_string(other.layers.size()));
  }
  const int64_t kept = batch_size();
  const int64_t added = other.batch_size();
  const int64_t rows = kept + added;
  const int64_t added_sources = other.layers.front().memory_keys.size(0);
  const int64_t kept_source = source_bias.size(3);
  const int64_t added_source = other.source_bias.size(3);
  const int64_t source_length = std::max(kept_source, added_source);
  const int64_t used = columns();
  const torch::TensorOptions ids = memory_rows.options();
  const int64_t memory_cache_rows = layers.front().memory_keys.size(0);
  // Free cache rows for the new sources are looked for (on the host) only
  // when the rest fits.
  const bool fits = rows <= cache_rows() && source_length <= source_capacity;
  const std::vector<int64_t> free =
      fits ? cache_storage::FreeRows(memory_rows, memory_cache_rows,
                                     added_sources)
           : std::vector<int64_t>();
  const bool has_room =
      fits && static_cast<int64_t>(free.size()) == added_sources;
  // Everything goes into `merged` first, and into cache entries that no row
  // reads; only the final move touches this.
  DecoderState merged;
  merged.layers.resize(layers.size());
  torch::Tensor kept_memory;  // The cache rows of the kept sources to copy.
  torch::Tensor added_memory_rows;  // Where the new sources go.
  if (has_room) {
    merged.source_capacity = source_capacity;
    merged.first_column = first_column;
    merged.end_column = end_column;
    added_memory_rows = at::tensor(free, at::kLong).to(ids.device());
    // The new rows own none of the columns in use; their entries there
    // name row 0's cache rows (written ones, so that a gathered copy stays
    // finite; cache row 0 itself when no row is left, which every step
    // wrote). Their own columns are set by the steps that write them.
    const torch::Tensor first_row =
        kept > 0 ? self_rows.narrow(0, 0, 1)
                 : at::zeros({1, self_rows.size(1)}, ids);
    // [rows, capacity] and [rows]
    merged.self_rows =
        at::cat({self_rows, first_row.expand({added, self_rows.size(1)})});
    merged.memory_rows = at::cat(
        {memory_rows, added_memory_rows.index_select(0, other.memory_rows)});
  } else {
    // Room for as many rows again, and sources twice as long, so that most
    // admissions after this one write only their own rows. The columns in
    // use move to the front of storages with room to grow: storages that
    // only ever doubled would otherwise keep every column that rows now gone
    // once used, and each later copy would carry them. Each kept source is
    // copied once, however many rows read it.
    merged.source_capacity = 2 * source_length;
    merged.first_column = 0;
    merged.end_column = used;
    const int64_t capacity = std::max(2 * used, kInitialColumns);
    merged.self_rows =
        cache_storage::OwnRows(rows, capacity, ids);  // [rows, capacity]
    const cache_storage::DistinctRows sources =
        cache_storage::Distinct(memory_rows);
    const auto kept_sources = static_cast<int64_t>(sources.distinct.size());
    kept_memory = at::tensor(sources.distinct, at::kLong).to(ids.device());
    added_memory_rows =
        at::arange(kept_sources, kept_sources + added_sources, ids);
    merged.memory_rows =  // [rows]
        at::cat({at::tensor(sources.renumbered, at::kLong).to(ids.device()),
                 other.memory_rows + kept_sources});
  }
  const int64_t capacity = merged.self_rows.size(1);
  // The new rows own none of the columns in use: -inf there, 0 on the spare
  // ones they will write: [added, 1, 1, capacity], then [rows, 1, 1, capacity].
  torch::Tensor added_bias =
      at::zeros({added, 1, 1, capacity}, self_bias_storage.options());
  added_bias.narrow(3, merged.first_column, used).fill_(kHidden);
  merged.self_bias_storage =
      at::cat({has_room ? self_bias_storage
                        : cache_storage::MovedBias(
                              self_bias_storage, first_column, used, capacity),
               added_bias});
  for (size_t i = 0; i < layers.size(); ++i) {
    const DecoderLayerCache& mine = layers[i];
    const DecoderLayerCache& theirs = other.layers[i];
    DecoderLayerCache& layer = merged.layers[i];
    for (auto storage :
         {&DecoderLayerCache::key_storage, &DecoderLayerCache::value_storage}) {
      if (has_room) {
        // The new rows write their columns into cache rows [kept, rows),
        // whose columns so far may still be read by other rows and stay.
        layer.*storage = mine.*storage;
        continue;
      }
      // [2 * rows, heads, capacity, d_k]: each kept row's columns in use in
      // its own cache row; the new rows' zero (finite, so that their -inf
      // bias gives them exactly zero weight).
      layer.*storage =
          ColumnsInOwnRows(*this, mine.*storage, 2 * rows, capacity);
    }
    for (auto memory :
         {&DecoderLayerCache::memory_keys, &DecoderLayerCache::memory_values}) {
      // [memory cache rows, heads, src_len, d_k]
      torch::Tensor& merged_memory = layer.*memory;
      if (has_room) {
        merged_memory = cache_storage::Widened(mine.*memory, source_length);
      } else {
        merged_memory = cache_storage::NewBuffer(mine.*memory, 2 * rows,
                                                 merged.source_capacity)
                            .narrow(2, 0, source_length);
        merged_memory.narrow(0, 0, kept_memory.size(0))
            .narrow(2, 0, kept_source)
            .copy_((mine.*memory).index_select(0, kept_memory));
      }
      // Positions the kept sources did not have: padding, finite (its bias
      // is -inf) so that no NaN from a spare entry reaches a gathered copy.
      merged_memory.narrow(2, kept_source, source_length - kept_source).zero_();
      merged_memory.index_copy_(
          0, added_memory_rows,
          cache_storage::PadAtEnd(theirs.*memory, 2, source_length, 0));
    }
  }
  merged.source_bias = at::cat(
      {cache_storage::PadAtEnd(source_bias, 3, source_length, kHidden),
       cache_storage::PadAtEnd(other.source_bias, 3, source_length, kHidden)});
  merged.positions = at::cat({positions, other.positions}, 0);
  // The kept rows' columns moved with the columns in use; the new rows own
  // those from the first one written after them.
  merged.row_first_columns =
      has_room ? row_first_columns
               : cache_storage::Shifted(row_first_columns, first_column);
  merged.row_first_columns.resize(rows, merged.end_column);
  merged.row_source_lengths = row_source_lengths;
  merged.row_source_lengths.insert(merged.row_source_lengths.end(),
                                   other.row_source_lengths.begin(),
                                   other.row_source_lengths.end());
  *this = std::move(merged);
}

}  // namespace fanyi
