#ifndef FANYI_COMMON_MODEL_TORCH_COMPAT_H_
#define FANYI_COMMON_MODEL_TORCH_COMPAT_H_

// The few calls whose form differs between Debian's LibTorch 1.13 (CPU
// builds) and the LibTorch 2.x inside PyTorch wheels (GPU builds). Everything
// version-specific lives here, so the rest of the code reads the same on both.

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/Tensor.h>
#include <c10/core/DeviceType.h>
#include <torch/version.h>

#include <cstdint>

#if TORCH_VERSION_MAJOR >= 2
#include <ATen/ops/scaled_dot_product_attention.h>
#else
#include <ATen/ops/bmm.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/softmax.h>
#endif

namespace fanyi::compat {

// Keeps Attention off cuDNN's attention kernel, which LibTorch 2.x prefers
// for float16 and bfloat16 on recent GPUs: with an additive bias, cuDNN
// builds a plan for each new shape (LibTorch's own warning calls it
// "excessive recompilation"), and a decoder's shapes change at every step.
// Float32, which cuDNN's kernel does not take, never used it. LibTorch then
// picks the memory-efficient kernel, which takes a bias. Process-wide; a
// no-op before LibTorch 2.3.
inline void AvoidCudnnAttention() {
#if TORCH_VERSION_MAJOR > 2 || \
    (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  at::globalContext().setSDPUseCuDNN(false);
#endif
}

// softmax(query·keyᵀ + bias)·value with dropout `dropout_p` on the weights.
// `query` [batch, heads, q_len, d_k] is already scaled by 1/√d_k; `key` and
// `value` [batch, heads, kv_len, d_k]; `bias` is additive (0 where a query may
// attend, -inf where not), broadcastable to [batch, heads, q_len, kv_len].
// Returns [batch, heads, q_len, d_k].
inline at::Tensor Attention(const at::Tensor& query, const at::Tensor& key,
                            const at::Tensor& value, const at::Tensor& bias,
                            double dropout_p) {
#if TORCH_VERSION_MAJOR >= 2
  // The GPU's fused kernels read 16 bytes at a time and fault ("misaligned
  // address") on a view that starts mid-vector, such as the decoder's
  // self-attention bias over the columns in use: such views go as copies.
  auto aligned = [](const at::Tensor& tensor) {
    const bool misaligned =
        tensor.is_cuda() &&
        reinterpret_cast<uintptr_t>(tensor.data_ptr()) % 16 != 0;
    return misaligned ? tensor.clone() : tensor;
  };
  // One fused kernel (flash attention on CPU and GPU where it applies); the
  // scale is 1 because the caller has scaled the query.
  return at::scaled_dot_product_attention(
      aligned(query), aligned(key), aligned(value), aligned(bias), dropout_p,
      /*is_causal=*/false, /*scale=*/1.0);
#else
  // Batched matrix products over batch × heads, spelled out: at::matmul's
  // general broadcasting costs more than the products at decoding sizes.
  const int64_t batch = query.size(0), heads = query.size(1);
  const int64_t query_length = query.size(2), key_length = key.size(2);
  const int64_t d_k = query.size(3);
  // [batch * heads, q_len, kv_len] -> [batch, heads, q_len, kv_len]
  at::Tensor scores =
      at::bmm(query.reshape({batch * heads, query_length, d_k}),
              key.reshape({batch * heads, key_length, d_k}).transpose(1, 2))
          .view({batch, heads, query_length, key_length});
  scores.add_(bias);
  at::Tensor weights = at::softmax(scores, -1);
  if (dropout_p > 0) weights = at::dropout(weights, dropout_p, /*train=*/true);
  // [batch * heads, q_len, d_k] -> [batch, heads, q_len, d_k]
  return at::bmm(weights.view({batch * heads, query_length, key_length}),
                 value.reshape({batch * heads, key_length, d_k}))
      .view({batch, heads, query_length, d_k});
#endif
}

// While one lives, operations on `device_type` that autocast lists run in
// bfloat16 (matrix products, attention) and the rest in float32 (softmax,
// layer norm, losses): mixed-precision training's forward pass. Backward
// follows the types the forward pass recorded, outside the scope. On
// leaving, the previous state returns and the bfloat16 copies of the
// weights cached for this pass are dropped (the optimizer step changes the
// weights).
class Bfloat16Autocast {
 public:
  explicit Bfloat16Autocast(c10::DeviceType device_type)
      : device_type_(device_type),
        was_enabled_(Enabled(device_type)),
        previous_type_(Type(device_type)) {
    Set(device_type_, true, at::kBFloat16);
  }
  ~Bfloat16Autocast() {
    Set(device_type_, was_enabled_, previous_type_);
    at::autocast::clear_cache();
  }
  Bfloat16Autocast(const Bfloat16Autocast&) = delete;
  Bfloat16Autocast& operator=(const Bfloat16Autocast&) = delete;

 private:
#if TORCH_VERSION_MAJOR >= 2
  static bool Enabled(c10::DeviceType type) {
    return at::autocast::is_autocast_enabled(type);
  }
  static at::ScalarType Type(c10::DeviceType type) {
    return at::autocast::get_autocast_dtype(type);
  }
  static void Set(c10::DeviceType type, bool enabled, at::ScalarType dtype) {
    at::autocast::set_autocast_dtype(type, dtype);
    at::autocast::set_autocast_enabled(type, enabled);
  }
#else
  static bool Enabled(c10::DeviceType type) {
    return type == c10::kCUDA ? at::autocast::is_enabled()
                              : at::autocast::is_cpu_enabled();
  }
  static at::ScalarType Type(c10::DeviceType type) {
    return type == c10::kCUDA ? at::autocast::get_autocast_gpu_dtype()
                              : at::autocast::get_autocast_cpu_dtype();
  }
  static void Set(c10::DeviceType type, bool enabled, at::ScalarType dtype) {
    if (type == c10::kCUDA) {
      at::autocast::set_autocast_gpu_dtype(dtype);
      at::autocast::set_enabled(enabled);
    } else {
      at::autocast::set_autocast_cpu_dtype(dtype);
      at::autocast::set_cpu_enabled(enabled);
    }
  }
#endif

  c10::DeviceType device_type_;
  bool was_enabled_;
  at::ScalarType previous_type_;
};

}  // namespace fanyi::compat

#endif  // FANYI_COMMON_MODEL_TORCH_COMPAT_H_
