// Float math written for the compiler to vectorize, for the decoding loops
// that FANYI_CPU_CLONES compiles once per instruction set.
#ifndef FANYI_COMMON_DECODING_VECTOR_MATH_H_
#define FANYI_COMMON_DECODING_VECTOR_MATH_H_

#include <cstdint>
#include <cstring>

namespace fanyi {

// e^y for y <= 0, and exactly 0 below -87 (and for -inf), where float's
// normal range ends. Branch free, so that a loop calling it vectorizes
// (a call to std::exp per value does not): y = k·ln 2 + r with
// |r| <= ln 2 / 2, e^r by its Taylor series to r⁷ (relative error under
// 1e-8 there), and 2^k written into the float's exponent bits.
inline float ExpOfNonPositive(float y) {
  const bool underflows = !(y >= -87.0f);
  const float clamped = underflows ? -87.0f : y;
  constexpr float kLog2E = 1.44269504f;
  constexpr float kRound = 12582912.0f;  // 1.5 · 2²³: rounds to an integer.
  const float k = (clamped * kLog2E + kRound) - kRound;
  // ln 2 in two parts, the first with few enough bits that k times it is
  // exact.
  const float r = (clamped - k * 0.693145752f) - k * 1.42860677e-6f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t bits = (static_cast<int32_t>(k) + 127) << 23;
  float two_to_k;
  std::memcpy(&two_to_k, &bits, sizeof two_to_k);
  return underflows ? 0.0f : p * two_to_k;
}

// Sixteen floats in one GCC vector: one AVX-512 register, two AVX2 ones,
// four SSE ones, as the clone compiling it has. For loops the compiler
// does not vectorize by itself (sums carried across an outer loop). Moved
// in and out with std::memcpy, which makes unaligned loads and stores.
typedef float Floats16 __attribute__((vector_size(64)));

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_VECTOR_MATH_H_
