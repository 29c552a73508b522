#ifndef FANYI_COMMON_DECODER_STATE_H_
#define FANYI_COMMON_DECODER_STATE_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace fanyi {

// What one decoder layer remembers between decoding steps.
struct DecoderLayerCache {
  torch::Tensor self_keys;      // [batch, heads, steps, d_k]; grows each step.
  torch::Tensor self_values;    // [batch, heads, steps, d_k]
  torch::Tensor memory_keys;    // [batch, heads, src_len, d_k]; fixed.
  torch::Tensor memory_values;  // [batch, heads, src_len, d_k]
};

// The incremental decoding state of a batch, owned by the caller: the
// self-attention key/value cache of every layer plus the cross-attention
// keys/values computed once per source.
struct DecoderState {
  std::vector<DecoderLayerCache> layers;
  torch::Tensor source_mask;  // [batch, 1, 1, src_len]; true on real tokens.
  int64_t steps = 0;          // Target tokens already fed to the decoder.

  // Keeps only the batch rows listed in `rows` (int64, on the state's
  // device), so finished sentences stop costing compute.
  void SelectRows(const torch::Tensor& rows);
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODER_STATE_H_
