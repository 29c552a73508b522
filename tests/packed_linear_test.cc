// PackedLinear against at::linear, for every kernel variant this CPU runs,
// at the shapes a decoding step has and at ragged ones (rows not a multiple
// of the 6-row tiles, features not a multiple of the 16-wide panels or of
// int8's 4-input groups); int8 against the same quantization done here.

#include "common/decoding/packed_linear.h"

#include <ATen/Parallel.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/amax.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/round.h>
#include <ATen/ops/where.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
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

// Each row of `m` [rows, features] rounded to whole units of its largest
// magnitude / 127 (ties to even, as PackedLinear rounds), and that
// unit: {units [rows, features], unit [rows, 1]}.
std::pair<torch::Tensor, torch::Tensor> QuantizeRows(const torch::Tensor& m) {
  const torch::Tensor largest = at::amax(at::abs(m), {1}, true);
  const torch::Tensor to_units = at::where(largest > 0, 127 / largest, 1.0);
  const torch::Tensor scaled = m * to_units;
  const torch::Tensor units = at::clamp(at::round(scaled), -127, 127);
  return {units, at::where(largest > 0, largest / 127, 1.0)};
}

// The int8 product with every kernel variant equals the quantized product
// computed here (in float64: every int32 sum exactly), and stays near the
// float one.
TEST(PackedLinearTest, Int8EqualsTheQuantizedProductForEveryVariant) {
  torch::manual_seed(13);
  for (CpuIsa isa : SupportedIsas()) {
    for (const Shape& s : kShapes) {
      const torch::Tensor weight = at::randn({s.out_features, s.in_features});
      const torch::Tensor bias = at::randn({s.out_features});
      // Rows of different magnitudes, and one of zeros.
      torch::Tensor input = at::randn({s.rows, s.in_features}) *
                            at::randn({s.rows, 1}).abs().mul(4);
      if (s.rows > 2) input[1].zero_();
      const PackedLinear packed(weight, bias, isa, ComputeType::kInt8);
      EXPECT_EQ(packed.compute_type(), ComputeType::kInt8);
      const auto [x, x_unit] = QuantizeRows(input);
      const auto [w, w_unit] = QuantizeRows(weight);
      const torch::Tensor expected =
          (at::linear(x.to(at::kDouble), w.to(at::kDouble)) *
               (x_unit * w_unit.t()).to(at::kDouble) +
           bias.to(at::kDouble))
              .to(at::kFloat);
      const torch::Tensor got = packed.Apply(input);
      EXPECT_TRUE(at::allclose(got, expected, 1e-5, 1e-4)) << Describe(isa, s);
      EXPECT_TRUE(at::allclose(packed.Apply(input, LinearEpilogue::kBiasRelu),
                               at::relu(expected), 1e-5, 1e-4))
          << Describe(isa, s);
      // Near the float product: per-row int8 keeps about 2 decimal digits.
      const torch::Tensor exact = at::linear(input, weight, bias);
      const double error = (got - exact).norm().item<double>();
      EXPECT_LE(error, 0.02 * exact.norm().item<double>() + 1e-3)
          << Describe(isa, s);
    }
  }
}

// Rows read and written with strides wider than a row, and the product
// added to what the output holds (a residual); the padding between rows is
// never touched.
TEST(PackedLinearTest, AddsToStridedOutputAndLeavesThePaddingAlone) {
  torch::manual_seed(12);
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kInt8}) {
    for (CpuIsa isa : SupportedIsas()) {
      const Shape s{9, 40, 33};
      const torch::Tensor weight = at::randn({s.out_features, s.in_features});
      const torch::Tensor bias = at::randn({s.out_features});
      // [rows, in + 3] and [rows, out + 5]: the real rows are the first
      // in_features and out_features columns.
      const torch::Tensor input = at::randn({s.rows, s.in_features + 3});
      const torch::Tensor residual = at::randn({s.rows, s.out_features + 5});
      torch::Tensor output = residual.clone();
      const PackedLinear packed(weight, bias, isa, type);
      packed.Apply(input.data_ptr<float>(), s.rows, input.size(1),
                   output.data_ptr<float>(), output.size(1),
                   LinearEpilogue::kAddToOutput);
      // The tensor form reads contiguous rows: the same product.
      const torch::Tensor expected =
          residual.narrow(1, 0, s.out_features) +
          packed.Apply(input.narrow(1, 0, s.in_features).contiguous());
      EXPECT_TRUE(at::allclose(output.narrow(1, 0, s.out_features), expected,
                               1e-5, 1e-5))
          << ComputeTypeName(type) << " " << Describe(isa, s);
      if (type == ComputeType::kFloat32) {
        EXPECT_TRUE(at::allclose(
            expected,
            residual.narrow(1, 0, s.out_features) +
                at::linear(input.narrow(1, 0, s.in_features), weight, bias),
            1e-4, 1e-4))
            << Describe(isa, s);
      }
      EXPECT_TRUE(at::equal(output.narrow(1, s.out_features, 5),
                            residual.narrow(1, s.out_features, 5)))
          << ComputeTypeName(type) << " " << Describe(isa, s);
    }
  }
}

// A product large enough to be shared among two intra-op threads (the
// output projection of a 32k vocabulary at batch 32) gives exactly what one
// thread gives, in float32 and int8, for every variant this CPU runs; so do
// the edges of the share (panels not a multiple of the tiles).
TEST(PackedLinearTest, TwoThreadsGiveWhatOneGives) {
  torch::manual_seed(13);
  const int threads = at::get_num_threads();
  for (CpuIsa isa : SupportedIsas()) {
    for (ComputeType type : {ComputeType::kFloat32, ComputeType::kInt8}) {
      for (const Shape& s : {Shape{32, 512, 32000}, Shape{7, 300, 4099}}) {
        const torch::Tensor weight = at::randn({s.out_features, s.in_features});
        const torch::Tensor bias = at::randn({s.out_features});
        const torch::Tensor input = at::randn({s.rows, s.in_features});
        const PackedLinear packed(weight, bias, isa, type);
        at::set_num_threads(1);
        const torch::Tensor one = packed.Apply(input);
        at::set_num_threads(2);
        const torch::Tensor two = packed.Apply(input);
        EXPECT_TRUE(at::equal(one, two))
            << Describe(isa, s) << " " << ComputeTypeName(type);
      }
    }
  }
  at::set_num_threads(threads);
}

TEST(PackedLinearTest, RefusesWhatItCannotMultiply) {
  const torch::Tensor weight = at::randn({4, 3});
  EXPECT_THROW(PackedLinear(weight, at::randn({5})), std::invalid_argument);
  EXPECT_THROW(PackedLinear(at::randn({4}), {}), std::invalid_argument);
  EXPECT_THROW(PackedLinear(weight.to(at::kDouble), {}), std::invalid_argument);
  // int8 sums would overflow int32.
  EXPECT_THROW(PackedLinear(at::randn({1, 65537}), {}, DetectedCpuIsa(),
                            ComputeType::kInt8),
               std::invalid_argument);
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
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kInt8}) {
    EXPECT_EQ(ParseComputeType(ComputeTypeName(type)), type);
  }
  EXPECT_THROW(ParseComputeType("int4"), std::invalid_argument);
  EXPECT_TRUE(CpuSupports(CpuIsa::kPortable));
  EXPECT_TRUE(CpuSupports(DetectedCpuIsa()));
}

}  // namespace
}  // namespace fanyi
