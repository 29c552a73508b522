#ifndef FANYI_SERVER_DECODE_ENGINE_H_
#define FANYI_SERVER_DECODE_ENGINE_H_

#include <cstdint>
#include <vector>

#include "common/decoding/translator.h"

namespace fanyi {

// What the RequestBatcher decodes with: greedy rows decoded one step at a
// time, joining and leaving between steps (continuous batching), and beam
// search rows decoded as a whole batch. Any method may throw; the batcher
// then fails the requests involved. Driven by one thread.
class DecodeEngine {
 public:
  // A greedy row that ended in a step.
  struct Finished {
    int64_t handle;
    std::vector<int64_t> target_ids;  // Without </s>.
  };

  virtual ~DecodeEngine();

  // Starts greedy decoding of `sources` (beam_size 1); returns one handle
  // per source, in order, unique among the rows in flight.
  virtual std::vector<int64_t> Add(
      const std::vector<EncodedSource>& sources) = 0;
  // Runs one decoding step for every row in flight; returns the rows that
  // ended in it, which leave.
  virtual std::vector<Finished> Step() = 0;
  // Drops rows without finishing them; unknown handles are ignored.
  virtual void Remove(const std::vector<int64_t>& handles) = 0;
  // Drops every row, after a failure has left their state unknown.
  virtual void Reset() = 0;
  // Rows in flight.
  virtual int64_t active() const = 0;

  // Decodes `sources` (any beam sizes) to the end; target ids per source, in
  // order. Rows in flight are untouched.
  virtual std::vector<std::vector<int64_t>> DecodeBatch(
      const std::vector<EncodedSource>& sources) = 0;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_DECODE_ENGINE_H_
