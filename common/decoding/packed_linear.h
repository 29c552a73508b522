#ifndef FANYI_COMMON_DECODING_PACKED_LINEAR_H_
#define FANYI_COMMON_DECODING_PACKED_LINEAR_H_

#include <torch/types.h>

#include <cstdint>

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
// Single-threaded: decoding runs one worker per core.
class PackedLinear {
 public:
  // Panel width: the output features one AVX-512 vector holds.
  static constexpr int64_t kPanelWidth = 16;

  PackedLinear() = default;
  // `weight` [out_features, in_features] and `bias` [out_features] (or
  // undefined: zero) are float32 tensors on any device; they are copied.
  // `isa` picks the kernel variant; it must be one this CPU supports
  // (CpuSupports), or std::invalid_argument is thrown.
  PackedLinear(const torch::Tensor& weight, const torch::Tensor& bias,
               CpuIsa isa = DetectedCpuIsa());

  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  CpuIsa isa() const { return isa_; }

  // `rows` rows of `input` (in_features floats each, `input_stride` floats
  // apart) times Wᵀ, plus the bias, written to (or with kAddToOutput added
  // to) `rows` rows of `output` (out_features floats each, `output_stride`
  // apart). `input` and `output` must not overlap.
  void Apply(const float* input, int64_t rows, int64_t input_stride,
             float* output, int64_t output_stride,
             LinearEpilogue epilogue) const;

  // The same for tensors: `input` [..., in_features] float32 CPU, returns
  // [..., out_features] (kBias or kBiasRelu). For tests and benchmarks.
  torch::Tensor Apply(const torch::Tensor& input,
                      LinearEpilogue epilogue = LinearEpilogue::kBias) const;

 private:
  int64_t in_features_ = 0;
  int64_t out_features_ = 0;
  CpuIsa isa_ = CpuIsa::kPortable;
  torch::Tensor packed_;  // [panels, in_features, kPanelWidth], zero-padded
  torch::Tensor bias_;    // [panels * kPanelWidth], zero-padded
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_PACKED_LINEAR_H_
