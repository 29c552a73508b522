#ifndef FANYI_COMMON_DECODING_BEAM_SEARCH_H_
#define FANYI_COMMON_DECODING_BEAM_SEARCH_H_

#include <cstdint>
#include <vector>

#include "common/decoding/greedy_decoder.h"
#include "common/model/transformer.h"

namespace fanyi {

// Settings of beam search, validated by BeamSearch.
struct BeamSearchOptions {
  int64_t beam_size = 4;        // Hypotheses kept per sentence at each step.
  double length_penalty = 1.0;  // GNMT α: score = log P / ((5 + len) / 6)^α.
  int64_t n_best = 1;           // Hypotheses returned per sentence (<= beam).
  DecodingOptions limits;       // Same length limits as greedy decoding.
};

// One finished translation of a sentence.
struct Hypothesis {
  std::vector<int64_t> ids;    // Target ids without </s>.
  double log_probability = 0;  // Sum of token log-probabilities (</s> too).
  double score = 0;            // log_probability / GNMT length penalty.
};

// The GNMT length penalty ((5 + length) / 6)^α of a hypothesis with `length`
// generated tokens (</s> included).
double LengthPenalty(int64_t length, double alpha);

// Batched beam search with the key/value cache: every sentence keeps
// `beam_size` rows in the batch, cache rows are reordered by the beam each
// hypothesis came from, and a sentence leaves the batch once no live beam can
// beat its `beam_size` best finished hypotheses (see SearchIsOver) or it
// reaches its length limit. Returns the
// `n_best` hypotheses of each source, best first, in input order.
std::vector<std::vector<Hypothesis>> BeamSearch(
    TransformerImpl& model, const std::vector<std::vector<int64_t>>& sources,
    const BeamSearchOptions& options);

// Sum of log-probabilities the model gives `target` (then </s>) after
// `source`: the quantity beam search maximises, computed by teacher forcing.
double SequenceLogProbability(TransformerImpl& model,
                              const std::vector<int64_t>& source,
                              const std::vector<int64_t>& target);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_BEAM_SEARCH_H_
