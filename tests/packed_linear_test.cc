// PackedLinear against at::linear, for every kernel variant this CPU runs,
// at the shapes a decoding step has and at ragged ones (rows not a multiple
// of the 6-row tiles, features not a multiple of the 16-wide panels).

#include "common/decoding/packed_linear.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/relu.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/decoding/cpu_isa.h"

namespace fanyi {
namespace {

std::vector<CpuIsa> SupportedIsas() {
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    if (CpuSupports(isa)) isas.push_back(isa);
  }
  return isas;
}

struct Shape {
  int64_t rows;
  int64_t in_features;
  int64_t out_features;
};

const std::vector<Shape> kShapes = {
    {1, 128, 384},  {1, 128, 3261}, {4, 128, 512}, {32, 512, 128},
    {7, 37, 65},    {13, 1, 15},    {6, 16, 16},   {5, 129, 17},
    {64, 128, 128}, {2, 3, 1},      {25, 64, 100}};

std::string Describe(CpuIsa isa, const Shape& s) {
  return CpuIsaName(isa) + " rows " + std::to_string(s.rows) + " in " +
         std::to_string(s.in_features) + " out " +
         std::to_string(s.out_features);
}

TEST(PackedLinearTest, EqualsLinearForEveryVariantAndEpilogue) {
  torch::manual_seed(11);
  for (CpuIsa isa : SupportedIsas()) {
    for (const Shape& s : kShapes) {
      const torch::Tensor weight = at::randn({s.out_features, s.in_features});
      const torch::Tensor bias = at::randn({s.out_features});
      const torch::Tensor input = at::randn({s.rows, s.in_features});
      const PackedLinear packed(weight, bias, isa);
      EXPECT_EQ(packed.isa(), isa);
      const torch::Tensor expected = at::linear(input, weight, bias);
      EXPECT_TRUE(at::allclose(packed.Apply(input), expected, 1e-4, 1e-4))
          << Describe(isa, s);
      EXPECT_TRUE(at::allclose(packed.Apply(input, LinearEpilogue::kBiasRelu),
                               at::relu(expected), 1e-4, 1e-4))
          << Describe(isa, s);
      // Without a bias.
      EXPECT_TRUE(at::allclose(PackedLinear(weight, {}, isa).Apply(input),
                               at::linear(input, weight), 1e-4, 1e-4))
          << Describe(isa, s);
    }
  }
}

// Rows read and written with strides wider than a row, and the product
// added to what the output holds (a residual); the padding between rows is
// never touched.
TEST(PackedLinearTest, AddsToStridedOutputAndLeavesThePaddingAlone) {
  torch::manual_seed(12);
  for (CpuIsa isa : SupportedIsas()) {
    const Shape s{9, 40, 33};
    const torch::Tensor weight = at::randn({s.out_features, s.in_features});
    const torch::Tensor bias = at::randn({s.out_features});
    // [rows, in + 3] and [rows, out + 5]: the real rows are the first
    // in_features and out_features columns.
    const torch::Tensor input = at::randn({s.rows, s.in_features + 3});
    const torch::Tensor residual = at::randn({s.rows, s.out_features + 5});
    torch::Tensor output = residual.clone();
    PackedLinear(weight, bias, isa)
        .Apply(input.data_ptr<float>(), s.rows, input.size(1),
               output.data_ptr<float>(), output.size(1),
               LinearEpilogue::kAddToOutput);
    const torch::Tensor expected =
        residual.narrow(1, 0, s.out_features) +
        at::linear(input.narrow(1, 0, s.in_features), weight, bias);
    EXPECT_TRUE(
        at::allclose(output.narrow(1, 0, s.out_features), expected, 1e-4, 1e-4))
        << Describe(isa, s);
    EXPECT_TRUE(at::equal(output.narrow(1, s.out_features, 5),
                          residual.narrow(1, s.out_features, 5)))
        << Describe(isa, s);
  }
}

TEST(PackedLinearTest, RefusesWhatItCannotMultiply) {
  const torch::Tensor weight = at::randn({4, 3});
  EXPECT_THROW(PackedLinear(weight, at::randn({5})), std::invalid_argument);
  EXPECT_THROW(PackedLinear(at::randn({4}), {}), std::invalid_argument);
  EXPECT_THROW(PackedLinear(weight.to(at::kDouble), {}), std::invalid_argument);
  const PackedLinear packed(weight, {});
  EXPECT_THROW(packed.Apply(at::randn({2, 4})), std::invalid_argument);
  EXPECT_THROW(packed.Apply(at::randn({2, 3}), LinearEpilogue::kAddToOutput),
               std::invalid_argument);
  EXPECT_EQ(packed.Apply(at::randn({2, 5, 3})).sizes(),
            (std::vector<int64_t>{2, 5, 4}));
}

TEST(CpuIsaTest, NamesRoundTripAndUnknownNamesAreRefused) {
  for (CpuIsa isa : {CpuIsa::kPortable, CpuIsa::kAvx2, CpuIsa::kAvx512}) {
    EXPECT_EQ(ParseCpuIsa(CpuIsaName(isa)), isa);
  }
  EXPECT_THROW(ParseCpuIsa("sse9"), std::invalid_argument);
  EXPECT_TRUE(CpuSupports(CpuIsa::kPortable));
  EXPECT_TRUE(CpuSupports(DetectedCpuIsa()));
}

}  // namespace
}  // namespace fanyi
