#ifndef FANYI_COMMON_MODEL_FEED_FORWARD_H_
#define FANYI_COMMON_MODEL_FEED_FORWARD_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "common/model/model_config.h"

namespace fanyi {

// Position-wise feed-forward block: linear, the activation (Activation),
// dropout, linear.
class FeedForwardImpl : public torch::nn::Module {
 public:
  FeedForwardImpl(int64_t d_model, int64_t d_ff, double dropout,
                  Activation activation = Activation::kRelu);
  // [batch, len, d_model] -> [batch, len, d_model]
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Linear inner_{nullptr};
  torch::nn::Linear outer_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  Activation activation_;
};
TORCH_MODULE(FeedForward);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_FEED_FORWARD_H_
