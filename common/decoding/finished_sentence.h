#ifndef FANYI_COMMON_DECODING_FINISHED_SENTENCE_H_
#define FANYI_COMMON_DECODING_FINISHED_SENTENCE_H_

#include <cstdint>
#include <vector>

namespace fanyi {

// A sentence that ended in a ContinuousDecoder step: its translation (the best
// hypothesis of a beam search).
struct FinishedSentence {
  int64_t handle;
  std::vector<int64_t> target_ids;  // Without </s>.
  // The next-best finished hypotheses, best first, as many as the source
  // asked and the search found.
  std::vector<std::vector<int64_t>> alternatives = {};
  // Sum of the translation's token log-probabilities, over its ids and
  // </s> when it ended with one (not when it reached its length limit).
  double log_probability = 0;
  int64_t scored_tokens = 0;  // Tokens log_probability sums over.
  // For a source that asked (EncodedSource::align): per target id, the
  // index into the source's ids of the token its step attended to most
  // in the model's alignment heads (ModelConfig::alignment_layer; what
  // CTranslate2's replace_unknowns reads). Empty otherwise.
  std::vector<int32_t> source_positions = {};
  // The same for each alternative, when the source asked.
  std::vector<std::vector<int32_t>> alternative_positions = {};
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_FINISHED_SENTENCE_H_
