#include "common/model/encoder_layer.h"

#include "common/model/residual_sublayer.h"

namespace fanyi {

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& config)
    : pre_norm_(config.pre_norm) {
  self_attention_ = register_module(
      "self_attention",
      MultiHeadAttention(config.d_model, config.heads, config.dropout));
  feed_forward_ = register_module(
      "feed_forward", FeedForward(config.d_model, config.d_ff, config.dropout,
                                  config.activation));
  attention_norm_ = register_module("attention_norm", MakeLayerNorm(config));
  feed_forward_norm_ =
      register_module("feed_forward_norm", MakeLayerNorm(config));
  dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x,
                                        const torch::Tensor& bias) {
  // [batch, src_len, d_model]
  torch::Tensor h = WrappedSublayer(
      pre_norm_, attention_norm_, x, [&](const torch::Tensor& in) {
        return dropout_(self_attention_(in, in, bias));
      });
  return WrappedSublayer(
      pre_norm_, feed_forward_norm_, h,
      [&](const torch::Tensor& in) { return dropout_(feed_forward_(in)); });
}

}  // namespace fanyi
