#ifndef FANYI_COMMON_MODEL_SINGLE_QUERY_ATTENTION_H_
#define FANYI_COMMON_MODEL_SINGLE_QUERY_ATTENTION_H_

#include <torch/types.h>

namespace fanyi {

// The keys (or values) each row sees when rows read a shared cache through
// a table (beams share their parents' cache columns instead of copying
// them): `cache` [cache_rows, heads, kv_len, d_k] and `rows`
// [batch, kv_len] int64, the cache row holding column c of row r (a column
// stride of 0 reads one cache row for every column: a row's source).
// Returns [batch, heads, kv_len, d_k]. Any device.
torch::Tensor GatherCacheRows(const torch::Tensor& cache,
                              const torch::Tensor& rows);

// Whether SingleQueryAttention takes these arguments: float32 CPU tensors,
// one query per row and head (a decoding step), the last dimension of the
// query, keys and values contiguous, and `rows` (when defined) a CPU int64
// table [batch, kv_len].
bool SingleQueryAttentionApplies(const torch::Tensor& query,
                                 const torch::Tensor& keys,
                                 const torch::Tensor& values,
                                 const torch::Tensor& bias,
                                 const torch::Tensor& rows = {});

// softmax(query·keysᵀ + bias)·values for a decoding step on the CPU, as
// compat::Attention computes it: `query` [batch, heads, 1, d_k] (already
// scaled), `bias` additive and broadcastable to [batch, heads, 1, kv_len].
// Without `rows`, `keys` and `values` are [batch, heads, kv_len, d_k] (views
// into a cache are fine); with `rows`, they are a cache read through it as
// GatherCacheRows reads it, without gathering anything. Returns
// [batch, heads, 1, d_k].
//
// At batch 32 a step's attention went through `bmm`, which calls the BLAS
// once per row and head for products of one query: 128 calls each packing
// its operands, 0.37 ms per attention for 40 cached columns, against
// 0.16 ms for these plain loops. Columns with -inf bias get exactly zero
// weight and add exactly nothing, and their keys and values are never read,
// so a row's result does not depend on how much padding its batch has.
torch::Tensor SingleQueryAttention(const torch::Tensor& query,
                                   const torch::Tensor& keys,
                                   const torch::Tensor& values,
                                   const torch::Tensor& bias,
                                   const torch::Tensor& rows = {});

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_SINGLE_QUERY_ATTENTION_H_
