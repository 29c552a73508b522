// The layer norms and residual connections that the Transformer's layers and
// the model around them share.
#ifndef FANYI_COMMON_MODEL_RESIDUAL_SUBLAYER_H_
#define FANYI_COMMON_MODEL_RESIDUAL_SUBLAYER_H_

#include <torch/nn/modules/normalization.h>
#include <torch/types.h>

#include "common/model/model_config.h"

namespace fanyi {

// A layer norm over d_model with the model's epsilon.
torch::nn::LayerNorm MakeLayerNorm(const ModelConfig& config);

// A sublayer `f` wrapped with its residual connection and layer norm:
// x + f(norm(x)) (pre-norm), or norm(x + f(x)) (post-norm).
template <typename Sublayer>
torch::Tensor WrappedSublayer(bool pre_norm, torch::nn::LayerNorm& norm,
                              const torch::Tensor& x, const Sublayer& f) {
  return pre_norm ? x + f(norm(x)) : norm(x + f(x));
}

// `norm`(x), or x when the model has no such norm.
torch::Tensor MaybeNorm(torch::nn::LayerNorm& norm, const torch::Tensor& x);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_RESIDUAL_SUBLAYER_H_
