#ifndef FANYI_SERVER_DECODE_ENGINE_H_
#define FANYI_SERVER_DECODE_ENGINE_H_

#include <cstdint>
#include <vector>

#include "common/decoding/continuous_decoder.h"

namespace fanyi {

// What a DecodeWorker decodes with: sentences (greedy rows or beam groups)
// decoded one step at a time, joining and leaving between steps. Driven by
// one thread. Any method may throw; what is left of the engine then is
// part of the contract, so the worker knows which requests to fail.
class DecodeEngine {
 public:
  // A sentence that ended in a step; the one finished type of decoding.
  using Finished = ContinuousDecoder::Finished;

  virtual ~DecodeEngine();

  // Starts decoding `sources`, each with its own beam size; returns one
  // handle per source, in order, unique among the sentences in flight.
  // When it throws, nothing was added and the others are untouched.
  virtual std::vector<int64_t> Add(
      const std::vector<EncodedSource>& sources) = 0;
  // Runs one decoding step for every sentence in flight; returns those that
  // ended in it, which leave. When it throws, every sentence has left.
  virtual std::vector<Finished> Step() = 0;
  // Drops sentences without finishing them; unknown handles are ignored.
  // When it throws, every sentence has left.
  virtual void Remove(const std::vector<int64_t>& handles) = 0;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_DECODE_ENGINE_H_
