// The batches of one training epoch, streamed from a prepared corpus's
// shards through a shuffling window.
#ifndef FANYI_TRAINER_TRAINING_BATCHES_H_
#define FANYI_TRAINER_TRAINING_BATCHES_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "trainer/token_shard.h"

namespace fanyi {

// The pairs of one batch as ids (without <s> or </s>).
struct TrainingBatch {
  std::vector<std::vector<int64_t>> sources;
  std::vector<std::vector<int64_t>> targets;
  int64_t rows = 0;
  int64_t target_tokens = 0;  // Target ids plus one </s> a row: what the
                              // loss is summed over.
};

// Streams an epoch's batches in bounded memory: the shards are read in an
// order the epoch's seed shuffles; consecutive shards fill a window of about
// `window_pairs` pairs, which is cut into length-bucketed batches
// (MakeTokenBatches: pairs sorted by length, batches shuffled), served in
// turn; then the next window. Memory holds one window. The same shards,
// options and seed give the same batches, so every rank of a data-parallel
// run walks the same sequence, and a resumed run can skip to where it
// stopped.
class TrainingBatches {
 public:
  TrainingBatches(std::vector<std::string> shard_paths, int64_t batch_tokens,
                  int64_t window_pairs, uint64_t seed);

  // The next batch, or false at the end of the epoch. Without `with_ids`
  // only the batch's rows and target_tokens are filled (another rank's
  // batch, or one skipped on resume). Throws std::runtime_error naming a
  // shard that cannot be read.
  bool Next(TrainingBatch* batch, bool with_ids = true);

  // The next step's batches: every rank walks the same batches and takes
  // its share of each step. A step is `per_rank` × `ranks` consecutive
  // batches; rank `rank` trains `per_rank` of them from `rank` × `per_rank`
  // on, and gets them with their ids in `mine`. Returns the step's batches
  // (fewer at the epoch's end, 0 once it has ended) and adds every rank's
  // target tokens to `step_tokens`.
  int64_t NextStep(int64_t per_rank, int64_t ranks, int64_t rank,
                   std::vector<TrainingBatch>* mine, int64_t* step_tokens);

  int64_t pairs_read() const { return pairs_read_; }

 private:
  // Loads the next shards into the window and cuts it into batches;
  // false when no shard is left.
  bool FillWindow();

  std::vector<std::string> shard_paths_;  // In this epoch's order.
  int64_t batch_tokens_;
  int64_t window_pairs_;
  std::mt19937_64 rng_;
  size_t next_shard_ = 0;
  std::vector<TokenShard> window_;
  // (shard in window_, pair in that shard) of each pair of the window.
  std::vector<std::pair<uint32_t, uint32_t>> window_pairs_list_;
  std::vector<std::vector<int64_t>> batches_;  // Into window_pairs_list_.
  size_t next_batch_ = 0;
  int64_t pairs_read_ = 0;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_TRAINING_BATCHES_H_
