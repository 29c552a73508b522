// PackedLinear's int8 compute type: the weight quantized per output feature
// when it is packed, each input row quantized per row at every call, int32
// sums, and the float epilogue of the float32 kernels.
#include <ATen/ops/ones.h>
#include <ATen/ops/zeros.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/decoding/packed_linear.h"
#include "common/decoding/panel_tiles.h"

namespace fanyi {
namespace {

using panel_tiles::kWidth;
using panel_tiles::PanelCount;

// Inputs per group: VNNI's dot product sums four byte products per lane.
constexpr int64_t kGroup = 4;
// The largest quantized magnitude. Symmetric (no -128), so that negating a
// value, as the AVX2 kernel does, never overflows.
constexpr float kLevels = 127;

// The three ways to run the product, from the fastest.
enum class Int8Kernel {
  kVnni,      // AVX512_VNNI: vpdpbusd on inputs shifted to unsigned bytes.
  kAvx2,      // AVX2: vpmaddubsw on |input| × (weight × sign of input).
  kPortable,  // Plain loops in int32.
};

Int8Kernel KernelFor(CpuIsa isa) {
  if (isa == CpuIsa::kAvx512) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512vnni")) return Int8Kernel::kVnni;
  }
  return isa >= CpuIsa::kAvx2 ? Int8Kernel::kAvx2 : Int8Kernel::kPortable;
}

// Input rows quantized for one call: `groups` × 4 bytes per row (padded with
// zeros), and the float value of one unit of each row.
struct QuantizedRows {
  std::vector<int8_t> values;
  std::vector<float> scales;
};

// Rounding is to nearest, ties to even, everywhere (the vector conversions'
// default mode), so that every variant computes the same units.

// `value` rounded to a whole unit within ±127. Clamped before the
// conversion, which is undefined for values outside int32 (and NaN, which
// a broken model could produce, becomes -127).
inline int32_t ToUnit(float value) {
  return static_cast<int32_t>(
      std::nearbyint(std::min(kLevels, std::max(-kLevels, value))));
}

// One row's units: `x` [n] times `to_units`, into `q` [n] (+128 as unsigned
// bytes, i.e. ^ 0x80, when `shift`).
void QuantizeRowPortable(const float* x, int64_t n, float to_units, bool shift,
                         int8_t* q) {
  for (int64_t k = 0; k < n; ++k) {
    const int32_t unit = ToUnit(x[k] * to_units);
    q[k] = static_cast<int8_t>(shift ? (unit ^ 0x80) : unit);
  }
}

float LargestPortable(const float* x, int64_t n) {
  float largest = 0;
  for (int64_t k = 0; k < n; ++k) largest = std::max(largest, std::fabs(x[k]));
  return largest;
}

FANYI_AVX2 float LargestAvx2(const float* x, int64_t n) {
  const __m256 magnitude_bits =
      _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  __m256 largest = _mm256_setzero_ps();
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    largest = _mm256_max_ps(
        largest, _mm256_and_ps(_mm256_loadu_ps(x + k), magnitude_bits));
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, largest);
  return std::max(*std::max_element(lanes, lanes + 8),
                  LargestPortable(x + k, n - k));
}

FANYI_AVX2 void QuantizeRowAvx2(const float* x, int64_t n, float to_units,
                                bool shift, int8_t* q) {
  const __m256 scale = _mm256_set1_ps(to_units);
  const __m128i flip = _mm_set1_epi8(shift ? int8_t(-128) : int8_t(0));
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const __m256i units =
        _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + k), scale));
    const __m128i halves = _mm_packs_epi32(_mm256_castsi256_si128(units),
                                           _mm256_extracti128_si256(units, 1));
    // Saturation keeps ±127 (a product can round a hair past 127).
    const __m128i bytes =
        _mm_max_epi8(_mm_packs_epi16(halves, halves), _mm_set1_epi8(-127));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(q + k),
                     _mm_xor_si128(bytes, flip));
  }
  QuantizeRowPortable(x + k, n - k, to_units, shift, q + k);
}

FANYI_AVX512 float LargestAvx512(const float* x, int64_t n) {
  __m512 largest = _mm512_setzero_ps();
  for (int64_t k = 0; k < n; k += 16) {
    const __mmask16 mask =
        static_cast<__mmask16>(n - k >= 16 ? 0xffff : (1u << (n - k)) - 1);
    largest = _mm512_max_ps(largest,
                            _mm512_abs_ps(_mm512_maskz_loadu_ps(mask, x + k)));
  }
  return _mm512_reduce_max_ps(largest);
}

FANYI_AVX512 void QuantizeRowAvx512(const float* x, int64_t n, float to_units,
                                    bool shift, int8_t* q) {
  const __m512 scale = _mm512_set1_ps(to_units);
  const __m128i flip = _mm_set1_epi8(shift ? int8_t(-128) : int8_t(0));
  const __m512i lowest = _mm512_set1_epi32(-127);
  for (int64_t k = 0; k < n; k += 16) {
    const __mmask16 mask =
        static_cast<__mmask16>(n - k >= 16 ? 0xffff : (1u << (n - k)) - 1);
    const __m512i units =
        _mm512_max_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(
                             _mm512_maskz_loadu_ps(mask, x + k), scale)),
                         lowest);
    _mm_mask_storeu_epi8(q + k, mask,
                         _mm_xor_si128(_mm512_cvtsepi32_epi8(units), flip));
  }
}

// Quantizes `rows` rows of `input` symmetrically, each by its own largest
// magnitude, with `isa`'s instructions. The VNNI kernel takes unsigned
// bytes: value + 128.
void QuantizeRows(const float* input, int64_t rows, int64_t input_stride,
                  int64_t in_features, int64_t groups, CpuIsa isa,
                  bool shift_to_unsigned, QuantizedRows* out) {
  const int64_t row_bytes = groups * kGroup;
  out->values.resize(rows * row_bytes);
  out->scales.resize(rows);
  const int8_t padding = shift_to_unsigned ? int8_t(-128) : int8_t(0);
  for (int64_t row = 0; row < rows; ++row) {
    const float* x = input + row * input_stride;
    int8_t* q = out->values.data() + row * row_bytes;
    const float largest = isa == CpuIsa::kAvx512 ? LargestAvx512(x, in_features)
                          : isa == CpuIsa::kAvx2
                              ? LargestAvx2(x, in_features)
                              : LargestPortable(x, in_features);
    const float to_units = largest > 0 ? kLevels / largest : 1.0f;
    out->scales[row] = largest > 0 ? largest / kLevels : 1.0f;
    switch (isa) {
      case CpuIsa::kAvx512:
        QuantizeRowAvx512(x, in_features, to_units, shift_to_unsigned, q);
        break;
      case CpuIsa::kAvx2:
        QuantizeRowAvx2(x, in_features, to_units, shift_to_unsigned, q);
        break;
      case CpuIsa::kPortable:
        QuantizeRowPortable(x, in_features, to_units, shift_to_unsigned, q);
        break;
    }
    // Padding: the value 0 (its weights are 0 too).
    std::fill(q + in_features, q + row_bytes, padding);
  }
}

// Everything a kernel needs for one ApplyInt8.
struct Int8Call {
  const int8_t* input;  // Quantized rows, input_stride bytes apart.
  int64_t input_stride;
  const float* row_scales;
  float* output;
  int64_t output_stride;
  const int8_t* packed;  // [panels, groups, kWidth, kGroup]
  const float* bias;
  const float* weight_scales;
  const int32_t* compensation;
  int64_t groups;
  int64_t out_features;
  LinearEpilogue epilogue;
};

// ---- Portable ----

void PortableInt8(const Int8Call& c, int64_t rows) {
  const int64_t panels = PanelCount(c.out_features);
  const int64_t panel_size = c.groups * kWidth * kGroup;
  for (int64_t row = 0; row < rows; ++row) {
    const int8_t* x = c.input + row * c.input_stride;
    float* y = c.output + row * c.output_stride;
    for (int64_t panel = 0; panel < panels; ++panel) {
      const int8_t* w = c.packed + panel * panel_size;
      int32_t sums[kWidth] = {};
      for (int64_t g = 0; g < c.groups; ++g) {
        for (int64_t j = 0; j < kWidth; ++j) {
          for (int64_t t = 0; t < kGroup; ++t) {
            sums[j] += int32_t(x[g * kGroup + t]) *
                       int32_t(w[(g * kWidth + j) * kGroup + t]);
          }
        }
      }
      const int64_t first = panel * kWidth;
      const int64_t count = std::min(kWidth, c.out_features - first);
      for (int64_t j = 0; j < count; ++j) {
        const float value =
            float(sums[j]) * (c.row_scales[row] * c.weight_scales[first + j]) +
            c.bias[first + j];
        y[first + j] = panel_tiles::Epilogue(value, &y[first + j], c.epilogue);
      }
    }
  }
}

// ---- AVX2: up to 4 rows × 1 panel. ----
// vpmaddubsw multiplies unsigned by signed bytes and adds pairs into int16,
// saturating. Feeding it |x| and w × sign(x), both within ±127, keeps every
// pair sum within 2 × 127² = 32258: no saturation.

struct Avx2Int8Kernel {
  template <int kRows, int kPanels>
  FANYI_AVX2 static void Tile(const Int8Call& c, int64_t row, int64_t panel) {
    static_assert(kPanels == 1, "one panel fills AVX2's registers");
    __m256i sums[kRows][2];
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      sums[r][0] = _mm256_setzero_si256();
      sums[r][1] = _mm256_setzero_si256();
    }
    const __m256i ones = _mm256_set1_epi16(1);
    const int8_t* w = c.packed + panel * c.groups * kWidth * kGroup;
    const int8_t* x = c.input + row * c.input_stride;
    for (int64_t g = 0; g < c.groups; ++g) {
      const __m256i low = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(w + g * kWidth * kGroup));
      const __m256i high = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(w + g * kWidth * kGroup + 32));
#pragma GCC unroll 4
      for (int r = 0; r < kRows; ++r) {
        int32_t four;
        std::memcpy(&four, x + r * c.input_stride + g * kGroup, sizeof four);
        const __m256i xv = _mm256_set1_epi32(four);
        const __m256i magnitude = _mm256_sign_epi8(xv, xv);
        const __m256i low_products =
            _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(low, xv));
        const __m256i high_products =
            _mm256_maddubs_epi16(magnitude, _mm256_sign_epi8(high, xv));
        sums[r][0] =
            _mm256_add_epi32(sums[r][0], _mm256_madd_epi16(low_products, ones));
        sums[r][1] = _mm256_add_epi32(sums[r][1],
                                      _mm256_madd_epi16(high_products, ones));
      }
    }
    const int64_t first = panel * kWidth;
    const int64_t count = std::min(kWidth, c.out_features - first);
    const __m256 bias_low = _mm256_loadu_ps(c.bias + first);
    const __m256 bias_high = _mm256_loadu_ps(c.bias + first + 8);
    const __m256 scale_low = _mm256_loadu_ps(c.weight_scales + first);
    const __m256 scale_high = _mm256_loadu_ps(c.weight_scales + first + 8);
#pragma GCC unroll 4
    for (int r = 0; r < kRows; ++r) {
      const __m256 row_scale = _mm256_set1_ps(c.row_scales[row + r]);
      panel_tiles::StorePanelAvx2(
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[r][0]),
                          _mm256_mul_ps(scale_low, row_scale), bias_low),
          _mm256_fmadd_ps(_mm256_cvtepi32_ps(sums[r][1]),
                          _mm256_mul_ps(scale_high, row_scale), bias_high),
          count, c.epilogue, c.output + (row + r) * c.output_stride + first);
    }
  }
};

// ---- AVX512_VNNI: up to 6 rows × 4 panels (24 sums in registers). ----
// vpdpbusd multiplies unsigned by signed bytes and adds each lane's four
// products to its int32 sum exactly. The inputs arrive as value + 128, so
// each sum exceeds the true one by 128 × the sum of that feature's weights:
// the compensation, taken off before scaling.

#define FANYI_VNNI                                            \
  __attribute__((                                             \
      target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni," \
             "avx2,fma")))

// sum += the four-byte dot products of `x` (unsigned) and `w` (signed) per
// lane. As inline assembly because GCC 12 does not tie the intrinsic's
// accumulator to its register: it copied each of the 24 sums to another
// register and to the stack on every use, and the kernel ran at 40% of the
// speed it has with this.
FANYI_VNNI inline void DotBytes(__m512i& sum, __m512i x, __m512i w) {
  asm("vpdpbusd %[w], %[x], %[sum]" : [sum] "+v"(sum) : [x] "v"(x), [w] "v"(w));
}

struct VnniKernel {
  template <int kRows, int kPanels>
  FANYI_VNNI static void Tile(const Int8Call& c, int64_t row, int64_t panel) {
    __m512i sums[kRows][kPanels];
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
      for (int p = 0; p < kPanels; ++p) sums[r][p] = _mm512_setzero_si512();
    }
    const int64_t panel_size = c.groups * kWidth * kGroup;
    const int8_t* w = c.packed + panel * panel_size;
    const int8_t* x = c.input + row * c.input_stride;
    for (int64_t g = 0; g < c.groups; ++g) {
      __m512i weights[kPanels];
#pragma GCC unroll 4
      for (int p = 0; p < kPanels; ++p) {
        weights[p] =
            _mm512_loadu_si512(w + p * panel_size + g * kWidth * kGroup);
      }
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        int32_t four;
        std::memcpy(&four, x + r * c.input_stride + g * kGroup, sizeof four);
        const __m512i xv = _mm512_set1_epi32(four);
#pragma GCC unroll 4
        for (int p = 0; p < kPanels; ++p) {
          DotBytes(sums[r][p], xv, weights[p]);
        }
      }
    }
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) {
      const int64_t first = (panel + p) * kWidth;
      const __mmask16 mask = panel_tiles::PanelMask(first, c.out_features);
      const __m512 bias = _mm512_loadu_ps(c.bias + first);
      const __m512 scales = _mm512_loadu_ps(c.weight_scales + first);
      const __m512i compensation = _mm512_loadu_si512(c.compensation + first);
#pragma GCC unroll 8
      for (int r = 0; r < kRows; ++r) {
        const __m512 sum =
            _mm512_cvtepi32_ps(_mm512_sub_epi32(sums[r][p], compensation));
        panel_tiles::StorePanelAvx512(
            _mm512_fmadd_ps(
                sum,
                _mm512_mul_ps(scales, _mm512_set1_ps(c.row_scales[row + r])),
                bias),
            mask, c.epilogue, c.output + (row + r) * c.output_stride + first);
      }
    }
  }
};

}  // namespace

void PackedLinear::PackInt8(const torch::Tensor& weight) {
  // An int32 sum of 255 × 127 per input overflows past 66,000 inputs.
  constexpr int64_t kMostInputs = 65536;
  if (in_features_ > kMostInputs) {
    throw std::invalid_argument(
        "PackedLinear: int8 sums overflow int32 beyond " +
        std::to_string(kMostInputs) + " input features, not " +
        std::to_string(in_features_));
  }
  const int64_t panels = PanelCount(out_features_);
  const int64_t groups = (in_features_ + kGroup - 1) / kGroup;
  const torch::Tensor w = weight.detach().to(at::kCPU, at::kFloat).contiguous();
  const float* source = w.data_ptr<float>();
  packed_ = at::zeros({panels, groups, kWidth, kGroup}, at::kChar);
  weight_scales_ = at::ones({panels * kWidth}, at::kFloat);
  compensation_ = at::zeros({panels * kWidth}, at::kInt);
  int8_t* packed = packed_.data_ptr<int8_t>();
  float* scales = weight_scales_.data_ptr<float>();
  int32_t* compensation = compensation_.data_ptr<int32_t>();
  for (int64_t n = 0; n < out_features_; ++n) {
    const float* row = source + n * in_features_;
    float largest = 0;
    for (int64_t k = 0; k < in_features_; ++k) {
      largest = std::max(largest, std::fabs(row[k]));
    }
    const float to_units = largest > 0 ? kLevels / largest : 1.0f;
    scales[n] = largest > 0 ? largest / kLevels : 1.0f;
    const int64_t panel = n / kWidth;
    const int64_t j = n % kWidth;
    int32_t sum = 0;
    for (int64_t k = 0; k < in_features_; ++k) {
      const int32_t unit = ToUnit(row[k] * to_units);
      const int64_t g = k / kGroup;
      packed[((panel * groups + g) * kWidth + j) * kGroup + k % kGroup] =
          static_cast<int8_t>(unit);
      sum += unit;
    }
    compensation[n] = 128 * sum;
  }
}

void PackedLinear::ApplyInt8(const float* input, int64_t rows,
                             int64_t input_stride, float* output,
                             int64_t output_stride,
                             LinearEpilogue epilogue) const {
  static const std::array<Int8Kernel, 3> kernels = {
      KernelFor(CpuIsa::kPortable), KernelFor(CpuIsa::kAvx2),
      KernelFor(CpuIsa::kAvx512)};
  const Int8Kernel kernel = kernels[static_cast<int>(isa_)];
  const int64_t groups = packed_.size(1);
  thread_local QuantizedRows quantized;
  QuantizeRows(input, rows, input_stride, in_features_, groups, isa_,
               kernel == Int8Kernel::kVnni, &quantized);
  const Int8Call call{quantized.values.data(),
                      groups * kGroup,
                      quantized.scales.data(),
                      output,
                      output_stride,
                      packed_.data_ptr<int8_t>(),
                      bias_.data_ptr<float>(),
                      weight_scales_.data_ptr<float>(),
                      compensation_.data_ptr<int32_t>(),
                      groups,
                      out_features_,
                      epilogue};
  switch (kernel) {
    case Int8Kernel::kVnni:
      return panel_tiles::RunTiles<VnniKernel, 6, 4>(
          call, rows, PanelCount(out_features_), groups * kGroup);
    case Int8Kernel::kAvx2:
      return panel_tiles::RunTiles<Avx2Int8Kernel, 4, 1>(
          call, rows, PanelCount(out_features_), groups * kGroup);
    case Int8Kernel::kPortable:
      return PortableInt8(call, rows);
  }
}

}  // namespace fanyi
