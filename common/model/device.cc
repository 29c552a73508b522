#include "common/model/device.h"

#include <torch/cuda.h>
#include <torch/types.h>

#include <stdexcept>

#include "common/model/torch_compat.h"

namespace fanyi {

torch::Device ResolveDevice(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw std::runtime_error("--device cuda: no CUDA device is available");
    }
    compat::AvoidCudnnAttention();
    return torch::Device(torch::kCUDA, 0);
  }
  if (name == "auto") {
    return ResolveDevice(torch::cuda::is_available() ? "cuda" : "cpu");
  }
  throw std::invalid_argument("device must be auto, cpu or cuda, not '" + name +
                              "'");
}

}  // namespace fanyi
