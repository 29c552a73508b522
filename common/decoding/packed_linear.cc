#include "common/decoding/packed_linear.h"

#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <immintrin.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/decoding/panel_tiles.h"

namespace fanyi {
namespace {

using panel_tiles::kWidth;
using panel_tiles::PanelCount;

// Everything a kernel needs for one Apply.
struct LinearCall {
  const float* input;
  int64_t input_stride;
  float* output;
  int64_t output_stride;
  const float* packed;  // [panels, in_features, kWidth]
  const float* bias;    // [panels * kWidth]
  int64_t in_features;
  int64_t out_features;
  LinearEpilogue epilogue;
};

// ---- Portable: plain loops over the same panels. ----

void PortableLinear(const LinearCall& c, int64_t rows) {
  const int64_t panels = PanelCount(c.out_features);
  for (int64_t row = 0; row < rows; ++row) {
    const float* x = c.input + row * c.input_stride;
    float* y = c.output + row * c.output_stride;
    for (int64_t panel = 0; panel < panels; ++panel) {
      const float* w = c.packed + panel * c.in_features * kWidth;
      float sums[kWidth] = {};
      for (int64_t k = 0; k < c.in_features; ++k) {
        for (int64_t j = 0; j < kWidth; ++j)
          sums[j] += x[k] * w[k * kWidth + j];
      }
      const int64_t first = panel * kWidth;
      const int64_t count = std::min(kWidth, c.out_features - first);
      for (int64_t j = 0; j < count; ++j) {
        y[first + j] = panel_tiles::Epilogue(sums[j] + c.bias[first + j],
                                             &y[first + j], c.epilogue);
      }
    }
  }
}

// ---- AVX2 + FMA: up to 6 rows × 1 panel (two 8-float halves). ----

struct Avx2Kernel {
  template <int kRows, int kPanels>
  FANYI_AVX2 static void Tile(const LinearCall& c, int64_t row, int64_t panel) {
    static_assert(kPanels == 1, "one panel fills AVX2's registers");
    __m256 sums[kRows][2];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      sums[r][0] = _mm256_setzero_ps();
      sums[r][1] = _mm256_setzero_ps();
    }
    const float* w = c.packed + panel * c.in_features * kWidth;
    const float* x = c.input + row * c.input_stride;
    for (int64_t k = 0; k < c.in_features; ++k) {
      const __m256 low = _mm256_load_ps(w + k * kWidth);
      const __m256 high = _mm256_load_ps(w + k * kWidth + 8);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const __m256 xv = _mm256_broadcast_ss(x + r * c.input_stride + k);
        sums[r][0] = _mm256_fmadd_ps(xv, low, sums[r][0]);
        sums[r][1] = _mm256_fmadd_ps(xv, high, sums[r][1]);
      }
    }
    const int64_t first = panel * kWidth;
    const int64_t count = std::min(kWidth, c.out_features - first);
    const __m256 bias_low = _mm256_load_ps(c.bias + first);
    const __m256 bias_high = _mm256_load_ps(c.bias + first + 8);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      panel_tiles::StorePanelAvx2(
          _mm256_add_ps(sums[r][0], bias_low),
          _mm256_add_ps(sums[r][1], bias_high), count, c.epilogue,
          c.output + (row + r) * c.output_stride + first);
    }
  }
};

// ---- AVX-512: up to 6 rows × 4 panels (24 sums in registers). ----

struct Avx512Kernel {
  template <int kRows, int kPanels>
  FANYI_AVX512 static void Tile(const LinearCall& c, int64_t row,
                                int64_t panel) {
    __m512 sums[kRows][kPanels];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int p = 0; p < kPanels; ++p) sums[r][p] = _mm512_setzero_ps();
    }
    const int64_t panel_size = c.in_features * kWidth;
    const float* w = c.packed + panel * panel_size;
    const float* x = c.input + row * c.input_stride;
    for (int64_t k = 0; k < c.in_features; ++k) {
      __m512 weights[kPanels];
#pragma GCC unroll 4
      for (int p = 0; p < kPanels; ++p) {
        weights[p] = _mm512_load_ps(w + p * panel_size + k * kWidth);
      }
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const __m512 xv = _mm512_set1_ps(x[r * c.input_stride + k]);
#pragma GCC unroll 4
        for (int p = 0; p < kPanels; ++p) {
          sums[r][p] = _mm512_fmadd_ps(xv, weights[p], sums[r][p]);
        }
      }
    }
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) {
      const int64_t first = (panel + p) * kWidth;
      const __mmask16 mask = panel_tiles::PanelMask(first, c.out_features);
      const __m512 bias = _mm512_load_ps(c.bias + first);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        panel_tiles::StorePanelAvx512(
            _mm512_add_ps(sums[r][p], bias), mask, c.epilogue,
            c.output + (row + r) * c.output_stride + first);
      }
    }
  }
};

void RequireFloatMatrix(const torch::Tensor& t, const char* name) {
  if (!t.defined() || t.dim() != 2 || t.scalar_type() != at::kFloat) {
    throw std::invalid_argument(std::string("PackedLinear: ") + name +
                                " must be a float32 matrix");
  }
}

}  // namespace

std::string ComputeTypeName(ComputeType type) {
  switch (type) {
    case ComputeType::kFloat32:
      return "float32";
    case ComputeType::kInt8:
      return "int8";
  }
  return "unknown";
}

ComputeType ParseComputeType(const std::string& name) {
  for (ComputeType type : {ComputeType::kFloat32, ComputeType::kInt8}) {
    if (name == ComputeTypeName(type)) return type;
  }
  throw std::invalid_argument("unknown compute type '" + name +
                              "'; use float32 or int8");
}

PackedLinear::PackedLinear(const torch::Tensor& weight,
                           const torch::Tensor& bias, CpuIsa isa,
                           ComputeType compute_type)
    : isa_(isa), compute_type_(compute_type) {
  RequireFloatMatrix(weight, "weight");
  if (!CpuSupports(isa)) {
    throw std::invalid_argument("PackedLinear: this CPU does not run " +
                                CpuIsaName(isa) + " code");
  }
  out_features_ = weight.size(0);
  in_features_ = weight.size(1);
  const int64_t panels = PanelCount(out_features_);
  if (compute_type_ == ComputeType::kInt8) {
    PackInt8(weight);
  } else {
    // [panels * 16, in] zero-padded -> [panels, 16, in] -> [panels, in, 16]
    torch::Tensor padded =
        at::zeros({panels * kWidth, in_features_}, at::kFloat);
    padded.narrow(0, 0, out_features_).copy_(weight.detach());
    packed_ = padded.view({panels, kWidth, in_features_})
                  .transpose(1, 2)
                  .contiguous();
  }
  bias_ = at::zeros({panels * kWidth}, at::kFloat);
  if (bias.defined()) {
    if (bias.dim() != 1 || bias.size(0) != out_features_) {
      throw std::invalid_argument("PackedLinear: bias must have " +
                                  std::to_string(out_features_) + " entries");
    }
    bias_.narrow(0, 0, out_features_).copy_(bias.detach());
  }
}

void PackedLinear::Apply(const float* input, int64_t rows, int64_t input_stride,
                         float* output, int64_t output_stride,
                         LinearEpilogue epilogue) const {
  if (rows <= 0) return;
  if (compute_type_ == ComputeType::kInt8) {
    return ApplyInt8(input, rows, input_stride, output, output_stride,
                     epilogue);
  }
  const LinearCall call{input,
                        input_stride,
                        output,
                        output_stride,
                        packed_.data_ptr<float>(),
                        bias_.data_ptr<float>(),
                        in_features_,
                        out_features_,
                        epilogue};
  switch (isa_) {
    case CpuIsa::kAvx512:
      return panel_tiles::RunTiles<Avx512Kernel, 6, 4>(
          call, rows, PanelCount(out_features_), in_features_);
    case CpuIsa::kAvx2:
      return panel_tiles::RunTiles<Avx2Kernel, 6, 1>(
          call, rows, PanelCount(out_features_), in_features_);
    case CpuIsa::kPortable:
      return PortableLinear(call, rows);
  }
}

torch::Tensor PackedLinear::Apply(const torch::Tensor& input,
                                  LinearEpilogue epilogue) const {
  if (!input.defined() || !input.device().is_cpu() ||
      input.scalar_type() != at::kFloat || input.dim() < 1 ||
      input.size(-1) != in_features_) {
    throw std::invalid_argument(
        "PackedLinear: input must be float32 on the CPU with " +
        std::to_string(in_features_) + " features");
  }
  if (epilogue == LinearEpilogue::kAddToOutput) {
    throw std::invalid_argument(
        "PackedLinear: the tensor form has no output to add to");
  }
  const torch::Tensor rows = input.reshape({-1, in_features_}).contiguous();
  std::vector<int64_t> shape = input.sizes().vec();
  shape.back() = out_features_;
  torch::Tensor output = at::empty({rows.size(0), out_features_}, at::kFloat);
  Apply(rows.data_ptr<float>(), rows.size(0), in_features_,
        output.data_ptr<float>(), out_features_, epilogue);
  return output.view(shape);  // [..., out_features]
}

}  // namespace fanyi
