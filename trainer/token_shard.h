// Binary shards of a prepared corpus: the ids of its pairs, written once by
// the corpus preparation and read back by the trainer a shard at a time.
#ifndef FANYI_TRAINER_TOKEN_SHARD_H_
#define FANYI_TRAINER_TOKEN_SHARD_H_

#include <cstdint>
#include <string>
#include <vector>

namespace fanyi {

// The ids of one side of one pair, inside a TokenShard.
struct IdSpan {
  const int32_t* data = nullptr;
  int64_t size = 0;
};

// The pairs of one shard file, in memory. The file holds, little-endian:
// the magic "FANYISHD", a uint32 format version, a uint32 0, a uint64 pair
// count and a uint64 id count, then per pair a uint32 source length and a
// uint32 target length, then every pair's source ids and target ids
// (int32), pair after pair. 4 bytes an id: a corpus of 5 million pairs of
// about 26 ids each is about 0.5 GB on disk, and a trainer holds only the
// shards of its shuffling window.
class TokenShard {
 public:
  static constexpr uint32_t kFormatVersion = 1;

  // Reads a shard file; throws std::runtime_error naming the file when it
  // cannot be read, is not a shard, or is truncated.
  static TokenShard Read(const std::string& path);

  int64_t size() const { return static_cast<int64_t>(source_lengths_.size()); }
  IdSpan source(int64_t pair) const;
  IdSpan target(int64_t pair) const;

 private:
  friend class TokenShardWriter;
  std::vector<uint32_t> source_lengths_;
  std::vector<uint32_t> target_lengths_;
  std::vector<int64_t> offsets_;  // Where each pair's source ids start.
  std::vector<int32_t> ids_;
};

// Collects pairs and writes them as one shard file.
class TokenShardWriter {
 public:
  // Appends a pair (ids without <s> or </s>).
  void Add(const std::vector<int64_t>& source,
           const std::vector<int64_t>& target);

  int64_t pairs() const { return shard_.size(); }
  int64_t ids() const { return static_cast<int64_t>(shard_.ids_.size()); }

  // Writes the pairs added so far to `path` and starts empty again; throws
  // std::runtime_error naming the file on failure.
  void WriteTo(const std::string& path);

 private:
  TokenShard shard_;
};

}  // namespace fanyi

#endif  // FANYI_TRAINER_TOKEN_SHARD_H_
