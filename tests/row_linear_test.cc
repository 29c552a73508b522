#include "common/model/row_linear.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <vector>

namespace fanyi {
namespace {

TEST(RowLinearTest, EqualsLinearForOneRowAndForMany) {
  torch::manual_seed(5);
  torch::Tensor weight = at::randn({7, 5});  // [out, in]
  torch::Tensor bias = at::randn({7});
  const std::vector<std::vector<int64_t>> shapes = {
      {5}, {1, 5}, {1, 1, 5}, {3, 5}, {2, 1, 5}, {2, 4, 5}};
  for (const auto& shape : shapes) {
    torch::Tensor input = at::randn(shape);
    for (bool with_bias : {true, false}) {
      torch::Tensor b = with_bias ? bias : torch::Tensor();
      torch::Tensor expected = at::linear(input, weight, b);
      torch::Tensor actual = RowLinear(input, weight, b);
      EXPECT_EQ(actual.sizes(), expected.sizes()) << input.sizes();
      EXPECT_TRUE(at::allclose(actual, expected, 1e-5, 1e-6))
          << input.sizes() << " bias " << with_bias;
    }
  }
}

TEST(RowLinearTest, TakesALinearModule) {
  torch::manual_seed(6);
  torch::nn::Linear linear(4, 3);
  torch::Tensor input = at::randn({1, 1, 4});
  EXPECT_TRUE(at::allclose(RowLinear(input, linear), linear(input)));
}

}  // namespace
}  // namespace fanyi
