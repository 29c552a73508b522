#include "common/model/cache_storage.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <unordered_map>

namespace fanyi {
namespace cache_storage {

torch::Tensor PadAtEnd(const torch::Tensor& tensor, int64_t dim, int64_t size,
                       float fill) {
  const int64_t missing = size - tensor.size(dim);
  if (missing <= 0) return tensor;
  std::vector<int64_t> shape = tensor.sizes().vec();
  shape[dim] = missing;
  return at::cat({tensor, at::full(shape, fill, tensor.options())}, dim);
}

torch::Tensor MovedBias(const torch::Tensor& bias, int64_t first,
                        int64_t columns, int64_t capacity) {
  torch::Tensor moved =
      at::zeros({bias.size(0), 1, 1, capacity}, bias.options());
  moved.narrow(3, 0, columns).copy_(bias.narrow(3, first, columns));
  return moved;
}

torch::Tensor OwnRows(int64_t rows, int64_t capacity,
                      const torch::TensorOptions& options) {
  return at::arange(rows, options).unsqueeze(1).repeat({1, capacity});
}

torch::Tensor NewBuffer(const torch::Tensor& like, int64_t rows, int64_t size) {
  return at::zeros({rows, like.size(1), size, like.size(3)}, like.options());
}

torch::Tensor Widened(const torch::Tensor& view, int64_t size) {
  return view.as_strided({view.size(0), view.size(1), size, view.size(3)},
                         view.strides(), view.storage_offset());
}

std::vector<int64_t> HostValues(const torch::Tensor& tensor) {
  const torch::Tensor host = tensor.to(at::kCPU).contiguous();
  const int64_t* data = host.data_ptr<int64_t>();
  return std::vector<int64_t>(data, data + host.numel());
}

std::vector<int64_t> FreeRows(const torch::Tensor& rows, int64_t cache_rows,
                              int64_t count) {
  std::vector<char> taken(cache_rows, 0);
  for (int64_t row : HostValues(rows)) taken.at(row) = 1;
  std::vector<int64_t> free;
  for (int64_t row = 0; row < cache_rows && free.size() < size_t(count);
       ++row) {
    if (!taken[row]) free.push_back(row);
  }
  return free;
}

DistinctRows Distinct(const torch::Tensor& rows) {
  DistinctRows result;
  std::unordered_map<int64_t, int64_t> index;
  for (int64_t row : HostValues(rows)) {
    auto [it, added] = index.emplace(row, result.distinct.size());
    if (added) result.distinct.push_back(row);
    result.renumbered.push_back(it->second);
  }
  return result;
}

std::vector<int64_t> Shifted(std::vector<int64_t> values, int64_t shift) {
  for (int64_t& value : values) value = std::max<int64_t>(0, value - shift);
  return values;
}

}  // namespace cache_storage
}  // namespace fanyi
