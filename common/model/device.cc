#include "common/model/device.h"

#include <torch/cuda.h>
#include <torch/types.h>

#include <stdexcept>

namespace fanyi {

torch::Device ResolveDevice(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) {
      throw std::runtime_error("--device cuda: no CUDA device is available");
    }
    return torch::Device(torch::kCUDA, 0);
  }
  if (name == "auto") {
    return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0)
                                       : torch::Device(torch::kCPU);
  }
  throw std::invalid_argument("device must be auto, cpu or cuda, not '" + name +
                              "'");
}

}  // namespace fanyi
