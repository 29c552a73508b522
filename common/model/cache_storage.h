#ifndef FANYI_COMMON_MODEL_CACHE_STORAGE_H_
#define FANYI_COMMON_MODEL_CACHE_STORAGE_H_

#include <torch/types.h>

#include <cstdint>
#include <vector>

namespace fanyi {
namespace cache_storage {

// What DecoderState does to its tensors when rows join and the cache grows:
// padding, moving bias columns, making row tables and buffers, and reading
// row tables on the host.

// `tensor` grown to `size` along `dim` with entries equal to `fill`, placed
// after the existing entries.
torch::Tensor PadAtEnd(const torch::Tensor& tensor, int64_t dim, int64_t size,
                       float fill);

// A copy of columns [first, first + columns) of `bias` [batch, 1, 1, ·] at
// columns [0, columns) of a new one with `capacity` columns, zero elsewhere.
torch::Tensor MovedBias(const torch::Tensor& bias, int64_t first,
                        int64_t columns, int64_t capacity);

// A table in which every row reads its own cache row: [rows, capacity].
torch::Tensor OwnRows(int64_t rows, int64_t capacity,
                      const torch::TensorOptions& options);

// A buffer of `rows` cache rows shaped like `like` [·, heads, ·, d_k], with
// `size` columns or source positions: [rows, heads, size, d_k]. Zeros: the
// state writes what its rows read, but a CUDA graph's step also reads the
// columns past its own (masked, where a NaN would still spread).
torch::Tensor NewBuffer(const torch::Tensor& like, int64_t rows, int64_t size);

// The first `size` source positions (dimension 2) of the buffer whose
// beginning `view` [rows, heads, ·, d_k] is: the view widened over spare
// positions. as_strided checks that the buffer holds them.
torch::Tensor Widened(const torch::Tensor& view, int64_t size);

// The entries of a 1-D int64 tensor, on the host.
std::vector<int64_t> HostValues(const torch::Tensor& tensor);

// Up to `count` cache rows, of `cache_rows`, that no entry of `rows` names.
std::vector<int64_t> FreeRows(const torch::Tensor& rows, int64_t cache_rows,
                              int64_t count);

// The cache rows a row table names, each once, in order of first mention
// (`distinct`), and the table renumbered to index into them (`renumbered`).
struct DistinctRows {
  std::vector<int64_t> distinct;
  std::vector<int64_t> renumbered;
};

// The DistinctRows of the row table `rows`.
DistinctRows Distinct(const torch::Tensor& rows);

// `values` with `shift` taken off each, at least 0.
std::vector<int64_t> Shifted(std::vector<int64_t> values, int64_t shift);

}  // namespace cache_storage
}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CACHE_STORAGE_H_
