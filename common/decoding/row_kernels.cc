#include "common/decoding/row_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/decoding/vector_math.h"

namespace fanyi {
namespace {

// a·b over `size` floats, in eight partial sums the compiler vectorizes.
inline float Dot(const float* a, const float* b, int64_t size) {
  constexpr int kLanes = 8;
  float partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      partial[lane] += a[i + lane] * b[i + lane];
    }
  }
  float sum = 0;
  for (int lane = 0; lane < kLanes; ++lane) sum += partial[lane];
  for (; i < size; ++i) sum += a[i] * b[i];
  return sum;
}

// Σ (row[i] - center)² over `size` floats (Σ row[i] when `squared` is
// false, center 0), in sixteen partial sums: one sum would be a chain of
// dependent additions, four cycles each, which the compiler may not
// reorder.
inline float RowSum(const float* row, int64_t size, float center,
                    bool squared) {
  constexpr int kLanes = 16;
  float partial[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= size; i += kLanes) {
    for (int lane = 0; lane < kLanes; ++lane) {
      const float x = row[i + lane] - center;
      partial[lane] += squared ? x * x : x;
    }
  }
  float sum = 0;
  for (int lane = 0; lane < kLanes; ++lane) sum += partial[lane];
  for (; i < size; ++i) {
    const float x = row[i] - center;
    sum += squared ? x * x : x;
  }
  return sum;
}

// out[0, 16·kVectors) = Σ over columns c of scores[c] · inverse · the
// value at values + offsets[c], skipping columns whose score is exactly 0
// (masked: their values may be stale and are never read). The sums stay in
// registers, in two sets, for even and odd columns: each set is a chain of
// dependent additions (four cycles each), and with two sets of kVectors
// the core runs 2·kVectors chains at once where one column at a time and
// sixteen outputs at a time ran one.
// (Always inlined: compiled apart, it would not get the clones' vector
// instructions.)
template <int kVectors>
__attribute__((always_inline)) inline void AddWeighted(
    float weight, const float* value, Floats16 (&sums)[kVectors]) {
  for (int k = 0; k < kVectors; ++k) {
    Floats16 part;
    std::memcpy(&part, value + 16 * k, sizeof part);
    sums[k] += weight * part;
  }
}

template <int kVectors>
__attribute__((always_inline)) inline void WeightedValues(
    const float* scores, float inverse, const float* values,
    const int64_t* offsets, int64_t length, float* out) {
  Floats16 even[kVectors] = {};
  Floats16 odd[kVectors] = {};
  int64_t c = 0;
  for (; c + 2 <= length; c += 2) {
    if (scores[c] != 0) {
      AddWeighted(scores[c] * inverse, values + offsets[c], even);
    }
    if (scores[c + 1] != 0) {
      AddWeighted(scores[c + 1] * inverse, values + offsets[c + 1], odd);
    }
  }
  if (c < length && scores[c] != 0) {
    AddWeighted(scores[c] * inverse, values + offsets[c], even);
  }
  for (int k = 0; k < kVectors; ++k) {
    const Floats16 sum = even[k] + odd[k];
    std::memcpy(out + 16 * k, &sum, sizeof sum);
  }
}

}  // namespace

FANYI_CPU_CLONES void LayerNormRows(const float* x, int64_t rows, int64_t size,
                                    const float* scale, const float* shift,
                                    float epsilon, float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * size;
    const float mean = RowSum(row, size, 0, false) / size;
    const float squares = RowSum(row, size, mean, true);
    const float inverse = 1.0f / std::sqrt(squares / size + epsilon);
    float* result = out + r * size;
    for (int64_t i = 0; i < size; ++i) {
      result[i] = (row[i] - mean) * inverse * scale[i] + shift[i];
    }
  }
}

FANYI_CPU_CLONES float AttendHead(const float* query, const float* keys,
                                  const float* values, const int64_t* offsets,
                                  const float* bias, int64_t length,
                                  int64_t d_k, float* scores, float* out) {
  float largest = kMaskedBias;
  for (int64_t c = 0; c < length; ++c) {
    if (bias[c] == kMaskedBias) {
      scores[c] = kMaskedBias;
      continue;
    }
    scores[c] = Dot(query, keys + offsets[c], d_k) + bias[c];
    largest = std::max(largest, scores[c]);
  }
  std::fill(out, out + d_k, 0.0f);
  if (largest == kMaskedBias) return 0;
  float total = 0;
  for (int64_t c = 0; c < length; ++c) {
    scores[c] = ExpOfNonPositive(scores[c] - largest);
  }
  for (int64_t c = 0; c < length; ++c) total += scores[c];
  const float inverse = 1.0f / total;
  // Up to 64 outputs at a time, summed in registers, then the rest one by
  // one.
  int64_t d = 0;
  for (; d + 64 <= d_k; d += 64) {
    WeightedValues<4>(scores, inverse, values + d, offsets, length, out + d);
  }
  switch ((d_k - d) / 16) {
    case 3:
      WeightedValues<3>(scores, inverse, values + d, offsets, length, out + d);
      break;
    case 2:
      WeightedValues<2>(scores, inverse, values + d, offsets, length, out + d);
      break;
    case 1:
      WeightedValues<1>(scores, inverse, values + d, offsets, length, out + d);
      break;
  }
  d += (d_k - d) / 16 * 16;
  for (; d < d_k; ++d) {
    for (int64_t c = 0; c < length; ++c) {
      if (scores[c] == 0) continue;
      out[d] += scores[c] * inverse * values[offsets[c] + d];
    }
  }
  return inverse;
}

void AttentionColumns::Reserve(int64_t columns) {
  if (static_cast<int64_t>(scores.size()) >= columns) return;
  scores.resize(columns);
  column_bias.resize(columns);
  offsets.resize(columns);
  next_bias.resize(columns);
  next_offsets.resize(columns);
}

}  // namespace fanyi
