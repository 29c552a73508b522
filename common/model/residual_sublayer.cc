#include "common/model/residual_sublayer.h"

namespace fanyi {

torch::nn::LayerNorm MakeLayerNorm(const ModelConfig& config) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model})
                                  .eps(config.layer_norm_epsilon));
}

torch::Tensor MaybeNorm(torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  return norm ? norm(x) : x;
}

}  // namespace fanyi
