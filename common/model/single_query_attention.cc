#include "common/model/single_query_attention.h"

#include <ATen/Parallel.h>
#include <ATen/TensorIndexing.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fanyi {
namespace {

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

bool LastDimContiguous(const torch::Tensor& t) {
  return t.dim() == 4 && (t.size(3) == 1 || t.stride(3) == 1);
}

// a·b over `size` floats, with eight partial sums so that the compiler can
// vectorize it.
float Dot(const float* a, const float* b, int64_t size) {
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

}  // namespace

torch::Tensor GatherCacheRows(const torch::Tensor& cache,
                              const torch::Tensor& rows) {
  using at::indexing::TensorIndex;
  const torch::Tensor columns =
      at::arange(rows.size(1), rows.options());  // [kv_len]
  // [cache_rows, kv_len, heads, d_k] indexed by [batch, kv_len] twice
  //   -> [batch, kv_len, heads, d_k] -> [batch, heads, kv_len, d_k]
  return cache.permute({0, 2, 1, 3})
      .index({TensorIndex(rows), TensorIndex(columns)})
      .permute({0, 2, 1, 3});
}

bool SingleQueryAttentionApplies(const torch::Tensor& query,
                                 const torch::Tensor& keys,
                                 const torch::Tensor& values,
                                 const torch::Tensor& bias,
                                 const torch::Tensor& rows) {
  for (const torch::Tensor* t : {&query, &keys, &values, &bias}) {
    if (!t->defined() || !t->device().is_cpu() ||
        t->scalar_type() != at::kFloat || t->dim() != 4) {
      return false;
    }
  }
  if (rows.defined()
          ? !rows.device().is_cpu() || rows.scalar_type() != at::kLong ||
                rows.dim() != 2 || rows.size(0) != query.size(0) ||
                rows.size(1) != keys.size(2)
          : query.size(0) != keys.size(0)) {
    return false;
  }
  return query.size(2) == 1 && LastDimContiguous(query) &&
         LastDimContiguous(keys) && LastDimContiguous(values) &&
         keys.sizes() == values.sizes() && query.size(1) == keys.size(1) &&
         query.size(3) == keys.size(3) && bias.size(2) == 1;
}

torch::Tensor SingleQueryAttention(const torch::Tensor& query,
                                   const torch::Tensor& keys,
                                   const torch::Tensor& values,
                                   const torch::Tensor& bias,
                                   const torch::Tensor& rows) {
  const int64_t batch = query.size(0), heads = keys.size(1);
  const int64_t columns = keys.size(2), d_k = keys.size(3);
  // Broadcast dimensions get stride 0.
  const torch::Tensor expanded_bias = bias.expand({batch, heads, 1, columns});
  torch::Tensor output = at::empty({batch, heads, 1, d_k}, query.options());
  const float* q = query.data_ptr<float>();
  const float* k = keys.data_ptr<float>();
  const float* v = values.data_ptr<float>();
  const float* b = expanded_bias.data_ptr<float>();
  // Without a table, row r reads cache row r for every column.
  const int64_t* table = rows.defined() ? rows.data_ptr<int64_t>() : nullptr;
  const int64_t row_stride = rows.defined() ? rows.stride(0) : 0;
  const int64_t column_stride = rows.defined() ? rows.stride(1) : 0;
  float* out = output.data_ptr<float>();
  const auto qs = query.strides(), ks = keys.strides(), vs = values.strides(),
             bs = expanded_bias.strides();

  // Enough rows × heads per task that a second thread is worth waking.
  const int64_t grain = std::max<int64_t>(1, 16384 / (4 * columns * d_k + 1));
  at::parallel_for(0, batch * heads, grain, [&](int64_t begin, int64_t end) {
    std::vector<float> weights(columns);
    for (int64_t index = begin; index < end; ++index) {
      const int64_t row = index / heads, head = index % heads;
      const float* query_row = q + row * qs[0] + head * qs[1];
      const float* bias_row = b + row * bs[0] + head * bs[1];
      auto cache_row = [&](int64_t c) {
        return table ? table[row * row_stride + c * column_stride] : row;
      };
      float largest = kMinusInfinity;
      for (int64_t c = 0; c < columns; ++c) {
        // A masked column's key is never read (it may be a stale cache slot).
        const float column_bias = bias_row[c * bs[3]];
        if (column_bias == kMinusInfinity) {
          weights[c] = kMinusInfinity;
          continue;
        }
        const float* key = k + cache_row(c) * ks[0] + head * ks[1] + c * ks[2];
        weights[c] = Dot(query_row, key, d_k) + column_bias;
        largest = std::max(largest, weights[c]);
      }
      float* result = out + index * d_k;
      std::fill(result, result + d_k, 0.0f);
      // A row and head with no column to attend to gets zeros.
      if (largest == kMinusInfinity) continue;
      float total = 0;
      for (int64_t c = 0; c < columns; ++c) {
        weights[c] = std::exp(weights[c] - largest);
        total += weights[c];
      }
      for (int64_t c = 0; c < columns; ++c) {
        if (weights[c] == 0) continue;  // Masked: adds exactly nothing.
        const float weight = weights[c] / total;
        const float* value =
            v + cache_row(c) * vs[0] + head * vs[1] + c * vs[2];
        for (int64_t d = 0; d < d_k; ++d) result[d] += weight * value[d];
      }
    }
  });
  return output;
}

}  // namespace fanyi
