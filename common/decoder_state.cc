#include "common/decoder_state.h"

#include <ATen/ops/index_select.h>

namespace fanyi {

void DecoderState::SelectRows(const torch::Tensor& rows) {
  for (DecoderLayerCache& layer : layers) {
    layer.self_keys = layer.self_keys.index_select(0, rows);
    layer.self_values = layer.self_values.index_select(0, rows);
    layer.memory_keys = layer.memory_keys.index_select(0, rows);
    layer.memory_values = layer.memory_values.index_select(0, rows);
  }
  source_mask = source_mask.index_select(0, rows);
}

}  // namespace fanyi
