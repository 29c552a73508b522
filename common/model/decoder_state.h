#ifndef FANYI_COMMON_MODEL_DECODER_STATE_H_
#define FANYI_COMMON_MODEL_DECODER_STATE_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace fanyi {

// What one decoder layer remembers between decoding steps. Rows read their
// entries through the tables of DecoderState (self_rows, memory_rows), so
// that reordering rows (beams extending other beams, rows that end) copies
// table entries instead of caches, and the rows of a beam search share one
// source. Cache rows that no row reads are room for rows to join.
struct DecoderLayerCache {
  // Self-attention keys and values of the steps so far, with spare columns
  // so that a step writes its column in place instead of copying the whole
  // cache: [cache_rows, heads, capacity, d_k]. A step writes row r's column
  // into cache row r; DecoderState says which columns are in use.
  torch::Tensor key_storage;
  torch::Tensor value_storage;
  // Cross-attention keys and values of the sources, computed and kept once
  // per source: [memory cache rows, heads, src_len, d_k], the first source
  // positions of buffers of DecoderState::source_capacity.
  torch::Tensor memory_keys;
  torch::Tensor memory_values;
};

// The incremental decoding state of a batch, owned by the caller: the
// self-attention key/value cache of every layer plus the cross-attention
// keys/values computed once per source. Rows may join (Append), leave and be
// reordered (ReorderRows) between steps, so each row keeps its own position,
// and the self-attention bias marks which cache columns are its own: a row
// that joined late has -inf on the leading columns.
struct DecoderState {
  // Columns of a new cache; it doubles when full.
  static constexpr int64_t kInitialColumns = 16;

  std::vector<DecoderLayerCache> layers;
  // [batch, 1, 1, src_len]: 0 on real tokens, -inf on padding.
  torch::Tensor source_bias;
  // [batch, 1, 1, capacity]: 0 on a row's own columns (and on spare ones),
  // -inf on columns from before the row joined.
  torch::Tensor self_bias_storage;
  // [batch, capacity] int64: the cache row holding column c of row r (a beam
  // reads the columns of the beams it extends where they were written).
  // Entries of columns a row does not own point to some written row.
  torch::Tensor self_rows;
  // [batch] int64: the cache row holding row r's source.
  torch::Tensor memory_rows;
  int64_t first_column = 0;  // Cache columns in use: [first_column,
  int64_t end_column = 0;    //   end_column) of every storage.
  torch::Tensor positions;   // [batch] int64: target tokens each row has fed.
  // Source positions the memory buffers hold (their views show
  // source_bias.size(3)), so that a longer source joins without a copy.
  int64_t source_capacity = 0;
  // Per row, on the host, what its biases say: the first storage column it
  // owns (-inf before it in self_bias_storage), and its source's length (-inf
  // from there on in source_bias). They move with the rows, so that dropping
  // the columns and source positions no row uses reads nothing back from
  // the device.
  std::vector<int64_t> row_first_columns;
  std::vector<int64_t> row_source_lengths;
  // Set by the caller before a step that should give alignments: the step
  // then leaves in `alignment` [batch, src_len] (float32, on the CPU) each
  // row's attention over its source in the model's alignment heads
  // (ModelConfig::alignment_layer and alignment_heads). Otherwise the step
  // leaves it undefined.
  bool wants_alignment = false;
  torch::Tensor alignment;

  int64_t batch_size() const;
  // Rows the self-attention caches hold: the batch and the spare rows.
  int64_t cache_rows() const;

  // Columns in use.
  int64_t columns() const { return end_column - first_column; }
  // Columns the storages hold.
  int64_t capacity() const { return self_bias_storage.size(3); }

  // What a decoding step captured as a CUDA graph (StepGraphs) depends on
  // besides its inputs: the address and layout of every cache it reads or
  // writes, and the source positions the memory buffers hold. (A graph
  // attends from the storages' first column, and reads the memory buffers
  // as far as its source bias goes, so neither the first column in use nor
  // the memory views' width is part of it.)
  std::vector<int64_t> CacheLayout() const;

  // The self-attention bias over the columns in use: [batch, 1, 1, columns].
  torch::Tensor self_bias() const;
  // The cache rows each row reads over the columns in use: [batch, columns].
  torch::Tensor self_rows_in_use() const;

  // Opens the next cache column for a step and returns its index in the
  // storages (row r writes it in cache row r); when they are full, moves
  // each row's columns in use to its own cache row of storages twice as
  // wide first.
  int64_t AddColumn();

  // Makes row i the former row order[i], for every i < order.size(), then
  // drops cache columns and source positions that no remaining row uses. A
  // row may be listed more than once (beams that share a parent), so the
  // batch may shrink or grow. Only the tables and the per-row biases move:
  // the caches stay as they are, so a step's reordering costs a few small
  // copies, whatever the cache holds; unless the batch outgrows the cache
  // rows, which are then copied into caches with room for twice the rows.
  // Throws std::invalid_argument for a row outside the batch.
  void ReorderRows(const std::vector<int64_t>& order);

  // Makes row i the former row order[i] for every row, `order` a [batch]
  // int64 tensor on the state's device, read nowhere else: no wait on the
  // device. Only the tables (self_rows) move: each row must take the place
  // of a row that differs from it in nothing else, neither its biases,
  // position and source nor its host records (the beams of one search,
  // which joined as one row and step together), and no column is dropped.
  void PermuteRows(const torch::Tensor& order);

  // Drops every row but keeps the caches (their addresses, cache rows and
  // capacities) and forgets their columns: rows that join next are written
  // into them without a copy (Append finds room), and a CUDA graph's key
  // (CacheLayout) holds from one batch to the next.
  void DropRows();

  // Removes the batch rows listed in `removed` (ascending, no repeats) by
  // moving the last rows into their places (ReorderRows). Returns, for each
  // remaining row, the row it was before, so the caller can reorder what it
  // keeps per row the same way.
  std::vector<int64_t> RemoveRows(const std::vector<int64_t>& removed);

  // Adds the rows of `other`, which have decoded nothing yet (a state fresh
  // from StartDecoding), after this state's rows: they own none of the
  // columns in use (-inf there), and sources are padded at the end to the
  // longer of the two. When the caches have room (cache rows and
  // source_capacity), only the new sources are written, into cache rows
  // that no row reads; otherwise every row moves to caches with room for as
  // many rows again and sources twice as long. The merged state is
  // built aside (in entries no row reads) and swapped in, so when this
  // throws (out of memory, say) the state is left exactly as it was. Throws
  // std::invalid_argument when `other` has cache columns or another number
  // of layers.
  void Append(const DecoderState& other);

 private:
  // Copies each row's columns in use to the front of its own cache row, in
  // caches of `rows` cache rows and `capacity` columns.
  void MoveToOwnRows(int64_t rows, int64_t capacity);
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_DECODER_STATE_H_
