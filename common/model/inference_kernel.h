#ifndef FANYI_COMMON_MODEL_INFERENCE_KERNEL_H_
#define FANYI_COMMON_MODEL_INFERENCE_KERNEL_H_

#include <torch/types.h>

#include <utility>
#include <vector>

#include "common/model/decoder_state.h"

namespace fanyi {

// Another implementation of the model's inference passes for one device
// (decoding/'s PackedTransformer, on the CPU); once installed with
// SetInferenceKernel, the model runs it in place of its own in eval mode
// without autograd.
class InferenceKernel {
 public:
  virtual ~InferenceKernel() = default;
  // As TransformerImpl::Encode.
  virtual torch::Tensor Encode(const torch::Tensor& source_ids,
                               const torch::Tensor& source_mask) const = 0;
  // The cross-attention keys and values of `memory` [sources, src_len,
  // d_model] for each decoder layer, each [sources, heads, src_len, d_k]
  // (what DecoderLayerImpl::StartDecoding computes).
  virtual std::vector<std::pair<torch::Tensor, torch::Tensor>> MemoryKeysValues(
      const torch::Tensor& memory) const = 0;
  // As TransformerImpl::DecodeStep.
  virtual torch::Tensor Step(const torch::Tensor& last_tokens,
                             DecoderState* state) const = 0;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_INFERENCE_KERNEL_H_
