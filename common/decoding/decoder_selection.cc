#include "common/decoding/decoder_selection.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "common/decoding/cpu_isa.h"
#include "common/decoding/packed_linear.h"
#include "common/decoding/packed_transformer.h"

namespace fanyi {

void SelectDecoder(TransformerImpl& model, const std::string& cpu_decoder,
                   const std::string& compute_type) {
  if (cpu_decoder != "packed" && cpu_decoder != "libtorch") {
    throw std::invalid_argument("cpu_decoder is \"" + cpu_decoder +
                                "\"; use packed or libtorch");
  }
  const bool on_cpu = model.parameters().front().device().is_cpu();
  if (compute_type == "float16" || compute_type == "bfloat16") {
    const bool half = compute_type == "float16";
    if (on_cpu && (half || cpu_decoder == "packed")) {
      throw std::invalid_argument(
          "compute_type " + compute_type +
          (half ? " needs a GPU" : " on the CPU needs the libtorch decoder") +
          "; the packed CPU decoder computes in int8 or float32");
    }
    model.SetInferenceKernel(nullptr);
    model.to(half ? at::kHalf : at::kBFloat16);
    return;
  }
  if (compute_type != "float32" && compute_type != "int8") {
    throw std::invalid_argument("unknown compute type '" + compute_type +
                                "'; use int8, float32, float16 or bfloat16");
  }
  const ComputeType type = ParseComputeType(compute_type);
  if (model.parameters().front().scalar_type() != at::kFloat) {
    model.to(at::kFloat);
  }
  if (!on_cpu) return;  // A GPU has no int8 step: float32 there.
  if (cpu_decoder == "libtorch") {
    if (type != ComputeType::kFloat32) {
      throw std::invalid_argument(
          "compute_type " + compute_type +
          " needs the packed CPU decoder; the libtorch one computes in "
          "float32 or bfloat16");
    }
    model.SetInferenceKernel(nullptr);
  } else if (!PackedTransformer::Computes(model.config())) {
    // Models from elsewhere with other layers run LibTorch's step.
    if (type != ComputeType::kFloat32) {
      throw std::invalid_argument(
          "compute_type " + compute_type +
          " needs the packed CPU decoder, which does not compute this "
          "model's layers; they run in float32 (compute_type float32)");
    }
    model.SetInferenceKernel(nullptr);
  } else {
    model.SetInferenceKernel(
        std::make_shared<PackedTransformer>(model, DetectedCpuIsa(), type));
  }
}

}  // namespace fanyi
