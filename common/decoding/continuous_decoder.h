#ifndef FANYI_COMMON_DECODING_CONTINUOUS_DECODER_H_
#define FANYI_COMMON_DECODING_CONTINUOUS_DECODER_H_

#include <cstdint>
#include <memory>
#include <vector>

namespace fanyi {

class TransformerImpl;
struct DecodingOptions;

// Greedy decoding of a changing set of sentences, one step at a time
// (continuous batching): sentences join between steps — their encoder pass
// runs and their rows join the key/value cache — and leave as soon as they
// end, so no sentence waits for a whole batch to finish. Keeps torch types
// out of its header. Not thread-safe: one thread drives it.
class ContinuousDecoder {
 public:
  // `model` must outlive the decoder; `options` sets each row's length limit.
  ContinuousDecoder(TransformerImpl& model, const DecodingOptions& options);
  ~ContinuousDecoder();

  // Encodes `sources` (ids without </s>) and adds them to the batch; returns
  // one handle per source, in order. Handles count up from 0.
  std::vector<int64_t> Add(const std::vector<std::vector<int64_t>>& sources);

  // A sentence that ended in a step.
  struct Finished {
    int64_t handle;
    std::vector<int64_t> target_ids;  // Without </s>.
  };

  // Runs one decoding step for every sentence in the batch; returns those
  // that ended in it (</s> or their length limit) and leave the batch.
  std::vector<Finished> Step();

  // Drops sentences without finishing them (cancelled or expired requests).
  // Handles not in the batch are ignored.
  void Remove(const std::vector<int64_t>& handles);

  // Sentences in the batch.
  int64_t active() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_CONTINUOUS_DECODER_H_
