#ifndef FANYI_COMMON_MODEL_DECODER_LAYER_H_
#define FANYI_COMMON_MODEL_DECODER_LAYER_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <utility>

#include "common/model/decoder_state.h"
#include "common/model/feed_forward.h"
#include "common/model/model_config.h"
#include "common/model/multi_head_attention.h"

namespace fanyi {

// One decoder block: masked self-attention, cross-attention over the
// encoder output, feed-forward; each wrapped like the encoder's.
class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const ModelConfig& config);

  // Whole target prefix at once (training and reference decoding).
  // x [batch, tgt_len, d_model]; memory [batch, src_len, d_model];
  // attention biases (AttentionBias): source_bias [batch, 1, 1, src_len],
  // target_bias [1, 1, tgt_len, tgt_len].
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory,
                        const torch::Tensor& source_bias,
                        const torch::Tensor& target_bias);

  // Projects the encoder output for cross-attention once per source (or
  // takes `projected`, its keys and values computed elsewhere), and
  // allocates the self-attention cache of `rows` rows and `capacity`
  // columns.
  void StartDecoding(const torch::Tensor& memory, int64_t rows,
                     int64_t capacity, DecoderLayerCache* cache,
                     std::pair<torch::Tensor, torch::Tensor> projected = {});

  // One step: x [batch, 1, d_model] is the newest position only; its keys
  // and values are written to cache column `column` ([1] int64, a tensor so
  // that a CUDA graph of the step can write another column at each replay),
  // and it attends to the columns from `first_column` that `self_bias`
  // [batch, 1, 1, columns] covers (and allows); row r reads column c in
  // cache row self_rows[r][c] and its source in cache row memory_rows[r][·]
  // ([batch, src_len]). With `alignment`, the cross-attention weights of
  // its first `alignment_heads` heads, averaged, are left there ([batch,
  // src_len], float32 on the CPU).
  torch::Tensor Step(const torch::Tensor& x, const torch::Tensor& source_bias,
                     const torch::Tensor& self_bias,
                     const torch::Tensor& self_rows,
                     const torch::Tensor& memory_rows, int64_t first_column,
                     const torch::Tensor& column, DecoderLayerCache* cache,
                     torch::Tensor* alignment = nullptr,
                     int64_t alignment_heads = 0);

 private:
  MultiHeadAttention self_attention_{nullptr};
  MultiHeadAttention cross_attention_{nullptr};
  FeedForward feed_forward_{nullptr};
  torch::nn::LayerNorm self_attention_norm_{nullptr};
  torch::nn::LayerNorm cross_attention_norm_{nullptr};
  torch::nn::LayerNorm feed_forward_norm_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  bool pre_norm_;
};
TORCH_MODULE(DecoderLayer);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_DECODER_LAYER_H_
