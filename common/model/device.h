#ifndef FANYI_COMMON_MODEL_DEVICE_H_
#define FANYI_COMMON_MODEL_DEVICE_H_

#include <c10/core/Device.h>

#include <string>

namespace fanyi {

// The device a `--device` value names: "cpu", "cuda" (throws
// std::runtime_error when no CUDA device is available) or "auto" (the first
// CUDA device when there is one, the CPU otherwise). Any other value throws
// std::invalid_argument. Choosing CUDA also keeps attention off cuDNN's
// kernel (compat::AvoidCudnnAttention).
c10::Device ResolveDevice(const std::string& name);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_DEVICE_H_
