// RunInShares (panel_tiles.h): the one file built with OpenMP, the runtime
// LibTorch's CPU threads are, so that the packed products share its
// intra-op threads and their count.
#include <ATen/Parallel.h>
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "common/decoding/panel_tiles.h"

namespace fanyi {
namespace panel_tiles {
namespace {

// Multiply-adds worth one more thread. With OMP_WAIT_POLICY=PASSIVE (what
// fanyi's programs run with, docs/design.md) every parallel region wakes
// sleeping threads; on a 2-core Zen 5 VM, int8 at the Argos shape, 2^18
// made greedy decoding at batch 1 a third slower than one thread, while
// 2^22 splits only the products that pay (the output projection, and the
// feed-forward layers at larger batches): bench/argos_shape.sh's model,
// 2^20 to 2^24 measured alike at batch 32.
constexpr int64_t kMinShareCost = int64_t{1} << 22;

}  // namespace

void RunInShares(int64_t blocks, int64_t block_cost, ShareFunction run,
                 const void* context) {
  if (blocks <= 0) return;
  const int64_t worth = blocks * block_cost / kMinShareCost;
  const int64_t shares = std::min<int64_t>(
      {static_cast<int64_t>(at::get_num_threads()), blocks, worth});
  if (shares <= 1 || omp_in_parallel()) return run(context, 0, blocks);
#pragma omp parallel num_threads(static_cast <int>(shares))
  {
    const int64_t share = omp_get_thread_num();
    const int64_t count = omp_get_num_threads();
    const int64_t first = blocks * share / count;
    const int64_t end = blocks * (share + 1) / count;
    if (first < end) run(context, first, end);
  }
}

}  // namespace panel_tiles
}  // namespace fanyi
