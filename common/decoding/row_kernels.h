#ifndef FANYI_COMMON_DECODING_ROW_KERNELS_H_
#define FANYI_COMMON_DECODING_ROW_KERNELS_H_

#include <cstdint>
#include <limits>
#include <vector>

#include "common/decoding/cpu_isa.h"

namespace fanyi {

// The packed CPU passes' loops over rows of floats: layer norm, and
// attention over key/value columns that lie anywhere in a cache, a head at
// a time and a batch of rows at a time. LayerNormRows and AttendHead are
// compiled once per instruction set (FANYI_CPU_CLONES on their definitions:
// on a declaration, every includer would make a resolver of its own for
// clones that only row_kernels.cc defines).

// The bias of a column that attention must not read (padding, a stale
// cache entry): it gets exactly zero weight.
constexpr float kMaskedBias = -std::numeric_limits<float>::infinity();

// out[r] = (x[r] - mean) / sqrt(variance + epsilon) * scale + shift, for
// `rows` rows of `size` floats.
void LayerNormRows(const float* x, int64_t rows, int64_t size,
                   const float* scale, const float* shift, float epsilon,
                   float* out);

// One head of one row attending over `length` columns: column c's key and
// value start `offsets[c]` floats into `keys` and `values`, and its bias is
// `bias[c]`. A column with kMaskedBias gets exactly zero weight and its key
// and value are never read (they may be stale cache entries). `query` is
// already scaled. A row with no column to attend to gets zeros. Leaves
// scores[c] · (the returned factor) as column c's attention weight; the
// factor is 0 for a row with no column.
float AttendHead(const float* query, const float* keys, const float* values,
                 const int64_t* offsets, const float* bias, int64_t length,
                 int64_t d_k, float* scores, float* out);

// Asks the core to start loading what one row's attention will read: for
// each of `heads` heads (`head_stride` floats apart), the d_k floats at
// keys and values + offsets[c] of every column c not masked by its bias.
// A row's cache entries lie scattered over the cache rows its beam's
// ancestors wrote, where the hardware prefetcher cannot guess them; asked
// for one row ahead, they arrive while the row before computes.
inline void PrefetchColumns(const float* keys, const float* values,
                            int64_t head_stride, int64_t heads,
                            const int64_t* offsets, const float* bias,
                            int64_t length, int64_t d_k) {
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t c = 0; c < length; ++c) {
      if (bias[c] == kMaskedBias) continue;
      const float* key = keys + h * head_stride + offsets[c];
      const float* value = values + h * head_stride + offsets[c];
      for (int64_t i = 0; i < d_k; i += 16) {
        __builtin_prefetch(key + i);
        __builtin_prefetch(value + i);
      }
    }
  }
}

// What AttendRows lays out for each row, kept between passes so that they
// do not allocate: one head's scores, the row's column biases and offsets,
// and the next row's, fetched ahead.
struct AttentionColumns {
  std::vector<float> scores;          // [columns]
  std::vector<float> column_bias;     // [columns]
  std::vector<int64_t> offsets;       // [columns]
  std::vector<float> next_bias;       // [columns]
  std::vector<int64_t> next_offsets;  // [columns]

  // Makes room for `columns` columns.
  void Reserve(int64_t columns);
};

// Attention of `rows` rows, head by head, each over `length` columns:
// `columns(r, bias, offsets)` lays out row r's (AttendHead's bias and
// offsets into `keys` and `values`, whose heads are `head_stride` floats
// apart); row r's queries start at queries + r · query_stride, its outputs
// at out + r · heads · d_k. Row r + 1's columns are laid out and fetched
// ahead while row r attends, unless `reads_the_same(r)` says it reads what
// row r did. With `alignment` [rows, length], the attention weights of the
// first `alignment_heads` heads are averaged into it (zeroed beforehand).
template <typename Columns, typename ReadsTheSame>
void AttendRows(const float* queries, int64_t query_stride, const float* keys,
                const float* values, int64_t head_stride, int64_t rows,
                int64_t length, int64_t heads, int64_t d_k,
                const Columns& columns, const ReadsTheSame& reads_the_same,
                AttentionColumns& work, float* out, float* alignment = nullptr,
                int64_t alignment_heads = 0) {
  if (rows == 0) return;
  columns(0, work.column_bias.data(), work.offsets.data());
  for (int64_t r = 0; r < rows; ++r) {
    if (r + 1 < rows) {
      columns(r + 1, work.next_bias.data(), work.next_offsets.data());
      if (!reads_the_same(r)) {
        PrefetchColumns(keys, values, head_stride, heads,
                        work.next_offsets.data(), work.next_bias.data(), length,
                        d_k);
      }
    }
    for (int64_t h = 0; h < heads; ++h) {
      const float factor =
          AttendHead(queries + r * query_stride + h * d_k,
                     keys + h * head_stride, values + h * head_stride,
                     work.offsets.data(), work.column_bias.data(), length, d_k,
                     work.scores.data(), out + (r * heads + h) * d_k);
      // A row with no column to attend to (factor 0) adds nothing.
      if (alignment != nullptr && h < alignment_heads && factor > 0) {
        const float weight = factor / static_cast<float>(alignment_heads);
        for (int64_t c = 0; c < length; ++c) {
          alignment[r * length + c] += work.scores[c] * weight;
        }
      }
    }
    work.column_bias.swap(work.next_bias);
    work.offsets.swap(work.next_offsets);
  }
}

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_ROW_KERNELS_H_
