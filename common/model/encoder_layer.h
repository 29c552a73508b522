#ifndef FANYI_COMMON_MODEL_ENCODER_LAYER_H_
#define FANYI_COMMON_MODEL_ENCODER_LAYER_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/pimpl.h>

#include "common/model/feed_forward.h"
#include "common/model/model_config.h"
#include "common/model/multi_head_attention.h"

namespace fanyi {

// One encoder block: self-attention and feed-forward, each wrapped as
// x + dropout(sublayer(norm(x))) (pre-norm, as the Annotated Transformer),
// or with ModelConfig::pre_norm off as norm(x + dropout(sublayer(x)))
// (post-norm, as the paper and Marian).
class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const ModelConfig& config);
  // x [batch, src_len, d_model], bias [batch, 1, 1, src_len] (an
  // AttentionBias) -> like x.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias);

 private:
  MultiHeadAttention self_attention_{nullptr};
  FeedForward feed_forward_{nullptr};
  torch::nn::LayerNorm attention_norm_{nullptr};
  torch::nn::LayerNorm feed_forward_norm_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  bool pre_norm_;
};
TORCH_MODULE(EncoderLayer);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_ENCODER_LAYER_H_
