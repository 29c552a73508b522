#ifndef FANYI_COMMON_DECODING_DECODER_SELECTION_H_
#define FANYI_COMMON_DECODING_DECODER_SELECTION_H_

#include <string>

#include "common/model/transformer.h"

namespace fanyi {

// Chooses `model`'s decoding step and its arithmetic by name (for a model
// that will not be trained further: SetInferenceKernel). `compute_type`:
// - "int8" or "float32": on the CPU, cpu_decoder "packed" installs a
//   PackedTransformer of that type (a model whose layers it does not compute
//   keeps LibTorch's step, in float32 only), "libtorch" removes any kernel
//   and takes float32 only. A GPU runs LibTorch's step in float32 for both.
// - "float16" or "bfloat16": LibTorch's step with the weights, caches and
//   activations cast to that type (layer norms and softmax accumulate in
//   float32 in LibTorch's kernels; the logits come back float32). float16
//   needs a GPU; bfloat16 on the CPU needs cpu_decoder "libtorch".
// Throws std::invalid_argument for another name or combination.
void SelectDecoder(TransformerImpl& model, const std::string& cpu_decoder,
                   const std::string& compute_type);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_DECODER_SELECTION_H_
