#include "trainer/training_batches.h"

#include <algorithm>
#include <utility>

#include "trainer/token_batches.h"

namespace fanyi {

TrainingBatches::TrainingBatches(std::vector<std::string> shard_paths,
                                 int64_t batch_tokens, int64_t window_pairs,
                                 uint64_t seed)
    : shard_paths_(std::move(shard_paths)),
      batch_tokens_(batch_tokens),
      window_pairs_(window_pairs),
      rng_(seed) {
  // A corpus written in some order (by source, by domain) is not read in
  // that order: each epoch takes its shards in another.
  std::shuffle(shard_paths_.begin(), shard_paths_.end(), rng_);
}

bool TrainingBatches::FillWindow() {
  window_.clear();
  window_pairs_list_.clear();
  batches_.clear();
  next_batch_ = 0;
  while (next_shard_ < shard_paths_.size() &&
         static_cast<int64_t>(window_pairs_list_.size()) < window_pairs_) {
    window_.push_back(TokenShard::Read(shard_paths_[next_shard_++]));
    const TokenShard& shard = window_.back();
    for (int64_t pair = 0; pair < shard.size(); ++pair) {
      window_pairs_list_.emplace_back(static_cast<uint32_t>(window_.size() - 1),
                                      static_cast<uint32_t>(pair));
    }
  }
  if (window_.empty()) return false;
  std::vector<PairLength> lengths;
  lengths.reserve(window_pairs_list_.size());
  for (const auto& [shard, pair] : window_pairs_list_) {
    // With </s> on the source and <s> or </s> on the target.
    lengths.push_back({window_[shard].source(pair).size + 1,
                       window_[shard].target(pair).size + 1});
  }
  batches_ = MakeTokenBatches(lengths, batch_tokens_, rng_);
  return true;
}

bool TrainingBatches::Next(TrainingBatch* batch, bool with_ids) {
  while (next_batch_ >= batches_.size()) {
    if (!FillWindow()) return false;
  }
  const std::vector<int64_t>& rows = batches_[next_batch_++];
  batch->sources.clear();
  batch->targets.clear();
  batch->rows = static_cast<int64_t>(rows.size());
  batch->target_tokens = 0;
  for (int64_t row : rows) {
    const auto& [shard, pair] = window_pairs_list_[static_cast<size_t>(row)];
    const IdSpan source = window_[shard].source(pair);
    const IdSpan target = window_[shard].target(pair);
    batch->target_tokens += target.size + 1;
    if (!with_ids) continue;
    batch->sources.emplace_back(source.data, source.data + source.size);
    batch->targets.emplace_back(target.data, target.data + target.size);
  }
  pairs_read_ += batch->rows;
  return true;
}

int64_t TrainingBatches::NextStep(int64_t per_rank, int64_t ranks, int64_t rank,
                                  std::vector<TrainingBatch>* mine,
                                  int64_t* step_tokens) {
  mine->clear();
  int64_t batches = 0;
  for (; batches < per_rank * ranks; ++batches) {
    const bool is_mine = batches / per_rank == rank;
    TrainingBatch batch;
    if (!Next(&batch, is_mine)) break;
    *step_tokens += batch.target_tokens;
    if (is_mine) mine->push_back(std::move(batch));
  }
  return batches;
}

}  // namespace fanyi
