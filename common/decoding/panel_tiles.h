// How PackedLinear's float32 and int8 kernels walk a product's output: the
// one tile dispatch and the epilogue stores that every CPU variant shares.
// Included only by packed_linear.cc and packed_linear_int8.cc.
#ifndef FANYI_COMMON_DECODING_PANEL_TILES_H_
#define FANYI_COMMON_DECODING_PANEL_TILES_H_

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "common/decoding/packed_linear.h"

namespace fanyi {
namespace panel_tiles {

constexpr int64_t kWidth = PackedLinear::kPanelWidth;

// A tile of `kRows` rows by `kPanels` panels, starting at (`row`, `panel`).
template <typename Call>
using TileFunction = void (*)(const Call&, int64_t row, int64_t panel);

// Kernel::Tile<r, p> for every r in 1..kMaxRows and p in 1..kMaxPanels, at
// [(r - 1) * kMaxPanels + p - 1].
template <typename Kernel, typename Call, int kMaxPanels, int... kIndex>
constexpr std::array<TileFunction<Call>, sizeof...(kIndex)> TileTable(
    std::integer_sequence<int, kIndex...>) {
  return {&Kernel::template Tile<kIndex / kMaxPanels + 1,
                                 kIndex % kMaxPanels + 1>...};
}

// Runs `run(first, end)` over shares of the blocks [0, `blocks`), each
// share on one of LibTorch's intra-op threads of the calling thread
// (at::get_num_threads(): fanyi-eval's --threads, the server's threads per
// decode worker), when the product is large enough to be worth waking them
// (`block_cost` multiply-adds a block); on the calling thread otherwise, and
// always inside a parallel region. `run(context, first, end)` must not
// throw. In panel_shares.cc, the one file built with OpenMP, LibTorch's CPU
// threads.
using ShareFunction = void (*)(const void* context, int64_t first, int64_t end);
void RunInShares(int64_t blocks, int64_t block_cost, ShareFunction run,
                 const void* context);

// Runs `Kernel::Tile<rows, panels>(call, row, panel)` over `rows` rows and
// `panels` panels of output (products `depth` long, in each output).
// Each tile size is its own instantiation, so its sums live in registers; a
// call picks the one that fits the edge. The panel loop is outside:
// kMaxPanels panels' weights stay in cache while every row block passes
// over them. Blocks of kMaxPanels panels are shared among the intra-op
// threads (RunInShares): each output is computed by the same code whatever
// the thread count, so the result is the same.
template <typename Kernel, int kMaxRows, int kMaxPanels, typename Call>
void RunTiles(const Call& call, int64_t rows, int64_t panels, int64_t depth) {
  static constexpr auto kTiles = TileTable<Kernel, Call, kMaxPanels>(
      std::make_integer_sequence<int, kMaxRows * kMaxPanels>());
  const auto run = [&](int64_t first_block, int64_t end_block) {
    for (int64_t panel = first_block * kMaxPanels;
         panel < std::min(panels, end_block * kMaxPanels);
         panel += kMaxPanels) {
      const int64_t panel_count = std::min<int64_t>(kMaxPanels, panels - panel);
      for (int64_t row = 0; row < rows; row += kMaxRows) {
        const int64_t row_count = std::min<int64_t>(kMaxRows, rows - row);
        kTiles[(row_count - 1) * kMaxPanels + panel_count - 1](call, row,
                                                               panel);
      }
    }
  };
  RunInShares((panels + kMaxPanels - 1) / kMaxPanels,
              rows * kMaxPanels * kWidth * depth,
              [](const void* context, int64_t first, int64_t end) {
                (*static_cast<const decltype(run)*>(context))(first, end);
              },
              &run);
}

// The panels of `out_features` outputs, the last one partial.
inline int64_t PanelCount(int64_t out_features) {
  return (out_features + kWidth - 1) / kWidth;
}

// One output value, bias already added, through the epilogue; `out` is the
// value it is written over (the residual, for kAddToOutput).
inline float Epilogue(float value, const float* out, LinearEpilogue e) {
  switch (e) {
    case LinearEpilogue::kBias:
      return value;
    case LinearEpilogue::kBiasRelu:
      return value > 0 ? value : 0;
    case LinearEpilogue::kAddToOutput:
      return *out + value;
  }
  return value;
}

#define FANYI_AVX2 __attribute__((target("avx2,fma")))
#define FANYI_AVX512 \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")))

// Writes one row's panel, `low` and `high` (bias added), through the
// epilogue to `y`: `count` of its 16 values, fewer in the last panel.
FANYI_AVX2 inline void StorePanelAvx2(__m256 low, __m256 high, int64_t count,
                                      LinearEpilogue e, float* y) {
  if (e == LinearEpilogue::kBiasRelu) {
    low = _mm256_max_ps(low, _mm256_setzero_ps());
    high = _mm256_max_ps(high, _mm256_setzero_ps());
  }
  if (count == kWidth) {
    if (e == LinearEpilogue::kAddToOutput) {
      low = _mm256_add_ps(low, _mm256_loadu_ps(y));
      high = _mm256_add_ps(high, _mm256_loadu_ps(y + 8));
    }
    _mm256_storeu_ps(y, low);
    _mm256_storeu_ps(y + 8, high);
    return;
  }
  alignas(32) float values[kWidth];
  _mm256_store_ps(values, low);
  _mm256_store_ps(values + 8, high);
  for (int64_t j = 0; j < count; ++j) {
    y[j] = e == LinearEpilogue::kAddToOutput ? y[j] + values[j] : values[j];
  }
}

// The same for AVX-512: `value` (bias added) to the lanes of `mask`.
FANYI_AVX512 inline void StorePanelAvx512(__m512 value, __mmask16 mask,
                                          LinearEpilogue e, float* y) {
  if (e == LinearEpilogue::kBiasRelu) {
    value = _mm512_max_ps(value, _mm512_setzero_ps());
  } else if (e == LinearEpilogue::kAddToOutput) {
    value = _mm512_add_ps(value, _mm512_maskz_loadu_ps(mask, y));
  }
  _mm512_mask_storeu_ps(y, mask, value);
}

// The lanes of the panel that starts at output `first` that hold outputs.
inline __mmask16 PanelMask(int64_t first, int64_t out_features) {
  const int64_t count = std::min(kWidth, out_features - first);
  return static_cast<__mmask16>((1u << count) - 1);
}

}  // namespace panel_tiles
}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_PANEL_TILES_H_
