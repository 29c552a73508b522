#ifndef FANYI_COMMON_MODEL_DECODER_STATE_H_
#define FANYI_COMMON_MODEL_DECODER_STATE_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace fanyi {

// What one decoder layer remembers between decoding steps.
struct DecoderLayerCache {
  // Self-attention keys and values of the steps so far, with spare columns so
  // that a step writes its column in place instead of copying the whole
  // cache: [batch, heads, capacity, d_k]. DecoderState says which columns
  // are in use.
  torch::Tensor key_storage;
  torch::Tensor value_storage;
  torch::Tensor memory_keys;    // [batch, heads, src_len, d_k]; fixed.
  torch::Tensor memory_values;  // [batch, heads, src_len, d_k]
};

// The incremental decoding state of a batch, owned by the caller: the
// self-attention key/value cache of every layer plus the cross-attention
// keys/values computed once per source. Rows may join (Append), leave and be
// reordered (ReorderRows) between steps, so each row keeps its own position,
// and the self-attention bias marks which cache columns are its own: a row that
// joined late has -inf on the leading columns.
struct DecoderState {
  // Columns of a new cache; it doubles when full.
  static constexpr int64_t kInitialColumns = 16;

  std::vector<DecoderLayerCache> layers;
  // [batch, 1, 1, src_len]: 0 on real tokens, -inf on padding.
  torch::Tensor source_bias;
  // [batch, 1, 1, capacity]: 0 on a row's own columns (and on spare ones),
  // -inf on columns from before the row joined.
  torch::Tensor self_bias_storage;
  int64_t first_column = 0;  // Cache columns in use: [first_column,
  int64_t end_column = 0;    //   end_column) of every storage.
  torch::Tensor positions;   // [batch] int64: target tokens each row has fed.
  // Room in the layers' caches, so that admitting rows (Append) writes only
  // the new rows instead of copying the whole cache: while row_capacity is
  // above 0, every tensor of every DecoderLayerCache is the first
  // batch_size() rows of a buffer of row_capacity rows, and memory_keys and
  // memory_values the first source_bias.size(3) positions of buffers of
  // source_capacity positions. Entries outside the views are spare and may
  // hold anything. 0 while the caches are exactly the batch (a state fresh
  // from StartDecoding).
  int64_t row_capacity = 0;
  int64_t source_capacity = 0;

  int64_t batch_size() const;

  // Columns in use.
  int64_t columns() const { return end_column - first_column; }

  // The self-attention bias over the columns in use: [batch, 1, 1, columns].
  torch::Tensor self_bias() const;

  // Opens the next cache column for a step and returns its index in the
  // storages; when they are full, moves the columns in use to storages of
  // twice the size first.
  int64_t AddColumn();

  // Makes row i the former row order[i], for every i < order.size() (at
  // most batch_size(); a row may be listed twice, as beams that share a
  // parent are), then drops cache columns and source positions that no
  // remaining row uses. When few rows change (rows that ended replaced by
  // the last ones, a few beams reordered) it copies only those, in place:
  // the storages keep their size, so the step costs a few rows, not the
  // whole cache. When most change, it gathers every row's columns in use
  // into new buffers of the same capacity.
  void ReorderRows(const std::vector<int64_t>& order);

  // Removes the batch rows listed in `removed` (ascending, no repeats) by
  // moving the last rows into their places (ReorderRows). Returns, for each
  // remaining row, the row it was before, so the caller can reorder what it
  // keeps per row the same way.
  std::vector<int64_t> RemoveRows(const std::vector<int64_t>& removed);

  // Adds the rows of `other`, which have decoded nothing yet (a state fresh
  // from StartDecoding), after this state's rows: they own none of the
  // columns in use (-inf there), and sources are padded at the end to the
  // longer of the two. When the caches have room (row_capacity and
  // source_capacity), only the new rows are written, into spare rows;
  // otherwise every row moves to buffers with room for as many again. The
  // merged state is built aside (in entries no view shows) and swapped in,
  // so when this throws (out of memory, say) the state is left exactly as it
  // was. Throws std::invalid_argument when `other` has cache columns or
  // another number of layers.
  void Append(const DecoderState& other);
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_DECODER_STATE_H_
