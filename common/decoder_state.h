#ifndef FANYI_COMMON_DECODER_STATE_H_
#define FANYI_COMMON_DECODER_STATE_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace fanyi {

// What one decoder layer remembers between decoding steps.
struct DecoderLayerCache {
  torch::Tensor self_keys;      // [batch, heads, columns, d_k]; grows a column
  torch::Tensor self_values;    //   each step. [batch, heads, columns, d_k]
  torch::Tensor memory_keys;    // [batch, heads, src_len, d_k]; fixed.
  torch::Tensor memory_values;  // [batch, heads, src_len, d_k]
};

// The incremental decoding state of a batch, owned by the caller: the
// self-attention key/value cache of every layer plus the cross-attention
// keys/values computed once per source. Rows may join (Append) and leave
// (SelectRows) between steps, so each row keeps its own position, and
// `self_mask` marks which cache columns are its own: a row that joined late
// has false leading columns.
struct DecoderState {
  std::vector<DecoderLayerCache> layers;
  torch::Tensor source_mask;  // [batch, 1, 1, src_len]; true on real tokens.
  torch::Tensor self_mask;    // [batch, 1, 1, columns]; true on own columns.
  torch::Tensor positions;    // [batch] int64: target tokens each row has fed.

  int64_t batch_size() const;

  // Keeps only the batch rows listed in `rows` (int64, on the state's
  // device), so finished sentences stop costing compute; then drops cache
  // columns and source positions that no remaining row uses.
  void SelectRows(const torch::Tensor& rows);

  // Adds the rows of `other` after this state's rows, padding source and
  // cache lengths to the longer of the two (padding is masked out).
  void Append(const DecoderState& other);
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODER_STATE_H_
