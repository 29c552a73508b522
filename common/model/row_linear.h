#ifndef FANYI_COMMON_MODEL_ROW_LINEAR_H_
#define FANYI_COMMON_MODEL_ROW_LINEAR_H_

#include <torch/nn/modules/linear.h>
#include <torch/types.h>

namespace fanyi {

// x·weightᵀ + bias, as at::linear, for `input` [..., in_features] and
// `weight` [out_features, in_features]; `bias` may be undefined. An input of
// a single row (one sentence decoding one step) is multiplied as a
// matrix-vector product: OpenBLAS's matrix-matrix routine first copies
// ("packs") the whole weight matrix on every call, which at batch 1 cost
// more than the product itself (41% of all instructions of greedy decoding
// at batch 1, counted with callgrind). Elsewhere than on the CPU it is
// at::linear: cuBLAS has no packing to avoid, and one fused GEMM with its
// bias beats a matrix-vector product plus an add.
torch::Tensor RowLinear(const torch::Tensor& input, const torch::Tensor& weight,
                        const torch::Tensor& bias);

// RowLinear with a torch::nn::Linear's parameters.
torch::Tensor RowLinear(const torch::Tensor& input,
                        const torch::nn::Linear& linear);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_ROW_LINEAR_H_
