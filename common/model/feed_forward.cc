#include "common/model/feed_forward.h"

#include <ATen/ops/gelu.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/silu.h>

#include "common/model/row_linear.h"

namespace fanyi {

FeedForwardImpl::FeedForwardImpl(int64_t d_model, int64_t d_ff, double dropout,
                                 Activation activation)
    : activation_(activation) {
  inner_ = register_module("inner", torch::nn::Linear(d_model, d_ff));
  outer_ = register_module("outer", torch::nn::Linear(d_ff, d_model));
  dropout_ = register_module("dropout", torch::nn::Dropout(dropout));
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  // [batch, len, d_model] -> [batch, len, d_ff] -> [batch, len, d_model]
  torch::Tensor inner = RowLinear(x, inner_);
  switch (activation_) {
    case Activation::kRelu:
      inner = at::relu(inner);
      break;
    case Activation::kGelu:
      inner = at::gelu(inner);
      break;
    case Activation::kGeluTanh:
      inner = at::gelu(inner, "tanh");
      break;
    case Activation::kSwish:
      inner = at::silu(inner);
      break;
  }
  return RowLinear(dropout_(inner), outer_);
}

}  // namespace fanyi
