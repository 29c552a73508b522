#ifndef FANYI_COMMON_DECODING_PACKED_LINEAR_H_
#define FANYI_COMMON_DECODING_PACKED_LINEAR_H_

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "common/decoding/cpu_isa.h"

namespace fanyi {

// What PackedLinear does with each output after the product x·Wᵀ: adding
// the bias always, then one more thing in the same pass over the output,
// where a separate operation would read and write it all again.
enum class LinearEpilogue {
  kBias,         // y = x·Wᵀ + b
  kBiasRelu,     // y = max(0, x·Wᵀ + b)
  kAddToOutput,  // y += x·Wᵀ + b (y holds the residual)
};

// The arithmetic of a PackedLinear's product.
enum class ComputeType {
  kFloat32,  // float32 weights and inputs.
  // int8 weights (one scale per output feature) times int8 inputs (one
  // scale per row, found at each call), summed in int32 and scaled back to
  // float: a quarter of the weight bytes, and on CPUs with AVX512_VNNI four
  // multiply-adds per lane per instruction instead of one.
  kInt8,
};

// "float32" or "int8".
std::string ComputeTypeName(ComputeType type);
// The compute type named `name` as ComputeTypeName writes it; throws
// std::invalid_argument for any other name.
ComputeType ParseComputeType(const std::string& name);

// A linear layer's weight W [out_features, in_features] (and bias) packed
// once, when a model is loaded, for the CPU decoding path: y = x·Wᵀ + b over
// raw float rows, with no packing, allocation or dispatch per call.
//
// The weight is stored in panels of 16 output features, each panel feature-
// interleaved along the input ([panels, in_features, 16]), so that the
// kernel reads one vector of 16 weights per input feature and multiplies it
// by up to six input rows at a time, keeping up to 6 × 64 sums in registers.
// OpenBLAS packs both operands again on every call of its matrix-matrix
// routine; at a decoding step's sizes (1 to 128 rows) that packing costs as
// much as the product.
//
// A large product's output panels are shared among the calling thread's
// intra-op threads (LibTorch's, at::get_num_threads()); the server's
// default, one decode worker per core, gives each worker one.
class PackedLinear {
 public:
  // Panel width: the output features one AVX-512 vector holds.
  static constexpr int64_t kPanelWidth = 16;

  PackedLinear() = default;
  // `weight` [out_features, in_features] and `bias` [out_features] (or
  // undefined: zero) are float32 tensors on any device; they are copied.
  // `isa` picks the kernel variant; it must be one this CPU supports
  // (CpuSupports), or std::invalid_argument is thrown. With kInt8 the
  // weight is quantized here, symmetrically per output feature.
  PackedLinear(const torch::Tensor& weight, const torch::Tensor& bias,
               CpuIsa isa = DetectedCpuIsa(),
               ComputeType compute_type = ComputeType::kFloat32);

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  CpuIsa isa() const { return isa_; }
  ComputeType compute_type() const { return compute_type_; }

  // `rows` rows of `input` (in_features floats each, `input_stride` floats
  // apart) times Wᵀ, plus the bias, written to (or with kAddToOutput added
  // to) `rows` rows of `output` (out_features floats each, `output_stride`
  // apart). `input` and `output` must not overlap. With kInt8 each input
  // row is quantized first, into a per-thread buffer.
  void Apply(const float* input, int64_t rows, int64_t input_stride,
             float* output, int64_t output_stride,
             LinearEpilogue epilogue) const;

  // The same for tensors: `input` [..., in_features] float32 CPU, returns
  // [..., out_features] (kBias or kBiasRelu). For tests and benchmarks.
  torch::Tensor Apply(const torch::Tensor& input,
                      LinearEpilogue epilogue = LinearEpilogue::kBias) const;

 private:
  // The int8 half, in packed_linear_int8.cc: quantizes and packs `weight`,
  // and runs the product.
  void PackInt8(const torch::Tensor& weight);
  void ApplyInt8(const float* input, int64_t rows, int64_t input_stride,
                 float* output, int64_t output_stride,
                 LinearEpilogue epilogue) const;

  int64_t in_features_ = 0;
  int64_t out_features_ = 0;
  CpuIsa isa_ = CpuIsa::kPortable;
  ComputeType compute_type_ = ComputeType::kFloat32;
  // kFloat32: [panels, in_features, kPanelWidth] floats, zero-padded.
  // kInt8: [panels, in_groups, kPanelWidth, 4] int8, where in_groups is
  // in_features / 4 rounded up: each group of four inputs of one output
  // feature lies together, as VNNI's 4-way dot product reads them.
  torch::Tensor packed_;
  torch::Tensor bias_;  // [panels * kPanelWidth], zero-padded
  // kInt8 only, [panels * kPanelWidth] each: the float value of one unit of
  // each output feature's weights, and 128 × the sum of its int8 weights
  // (the VNNI kernel feeds inputs shifted by +128 into unsigned bytes and
  // takes this back off).
  torch::Tensor weight_scales_;
  torch::Tensor compensation_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_PACKED_LINEAR_H_
