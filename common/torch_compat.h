#ifndef FANYI_COMMON_TORCH_COMPAT_H_
#define FANYI_COMMON_TORCH_COMPAT_H_

// The few calls whose form differs between Debian's LibTorch 1.13 (CPU
// builds) and the LibTorch 2.x inside PyTorch wheels (GPU builds). Everything
// version-specific lives here, so the rest of the code reads the same on both.

#include <ATen/core/Tensor.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <ATen/ops/scaled_dot_product_attention.h>
#else
#include <ATen/ops/dropout.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/softmax.h>
#endif

namespace fanyi::compat {

// softmax(query·keyᵀ + bias)·value with dropout `dropout_p` on the weights.
// `query` [batch, heads, q_len, d_k] is already scaled by 1/√d_k; `key` and
// `value` [batch, heads, kv_len, d_k]; `bias` is additive (0 where a query may
// attend, -inf where not), broadcastable to [batch, heads, q_len, kv_len].
// Returns [batch, heads, q_len, d_k].
inline at::Tensor Attention(const at::Tensor& query, const at::Tensor& key,
                            const at::Tensor& value, const at::Tensor& bias,
                            double dropout_p) {
#if TORCH_VERSION_MAJOR >= 2
  // One fused kernel (flash attention on CPU and GPU where it applies); the
  // scale is 1 because the caller has scaled the query.
  return at::scaled_dot_product_attention(query, key, value, bias, dropout_p,
                                          /*is_causal=*/false, /*scale=*/1.0);
#else
  // [batch, heads, q_len, kv_len]
  at::Tensor scores = at::matmul(query, key.transpose(-2, -1));
  scores.add_(bias);
  at::Tensor weights = at::softmax(scores, -1);
  if (dropout_p > 0) weights = at::dropout(weights, dropout_p, /*train=*/true);
  return at::matmul(weights, value);  // [batch, heads, q_len, d_k]
#endif
}

}  // namespace fanyi::compat

#endif  // FANYI_COMMON_TORCH_COMPAT_H_
