#include "common/model/row_linear.h"

#include <ATen/ops/addmv.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/mv.h>

#include <vector>

namespace fanyi {

torch::Tensor RowLinear(const torch::Tensor& input, const torch::Tensor& weight,
                        const torch::Tensor& bias) {
  const int64_t in_features = input.size(-1);
  if (input.numel() != in_features || !input.is_cpu()) {
    return at::linear(input, weight, bias);
  }
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = weight.size(0);
  torch::Tensor row = input.reshape({in_features});  // [in_features]
  // [out_features]
  torch::Tensor output =
      bias.defined() ? at::addmv(bias, weight, row) : at::mv(weight, row);
  return output.view(shape);  // [..., out_features]
}

torch::Tensor RowLinear(const torch::Tensor& input,
                        const torch::nn::Linear& linear) {
  return RowLinear(input, linear->weight, linear->bias);
}

}  // namespace fanyi
