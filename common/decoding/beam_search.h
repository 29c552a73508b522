#ifndef FANYI_COMMON_DECODING_BEAM_SEARCH_H_
#define FANYI_COMMON_DECODING_BEAM_SEARCH_H_

#include <cstdint>
#include <vector>

#include "common/decoding/decoding_options.h"

namespace fanyi {

class TransformerImpl;

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
  double score = 0;  // log_probability normalized by length (SentenceSearch).
  // Tokens log_probability sums over: the ids, and </s> when it ended
  // with one (not when it reached its length limit).
  int64_t scored_tokens = 0;
  // The source position each of `ids` after the forced ones aligns to, when
  // the search was given them (SentenceSearch::Advance); empty otherwise.
  std::vector<int32_t> source_positions = {};
};

// The GNMT length penalty ((5 + length) / 6)^α of a hypothesis with `length`
// generated tokens (</s> included).
double LengthPenalty(int64_t length, double alpha);

// The beam search of one sentence, one step at a time: its `beam_size`
// beams (prefixes and log-probabilities) and the hypotheses that ended. It
// knows no tensors: the caller runs the model for the beams' rows and hands
// over each step's best candidates. Both BeamSearch and the continuous
// decoder's beam groups step sentences through this, so they search alike.
class SentenceSearch {
 public:
  // A kept beam of the next step: the beam it extends and its new token.
  struct Extension {
    int64_t parent;
    int64_t token;
  };

  // Starts with one live beam (the empty prefix, or `forced`) and
  // beam_size - 1 dead ones (score -inf), so that the first step does not
  // pick the same token `beam_size` times. `limit` is the most tokens it may
  // generate; `stops_early` as DecodingOptions::beam_stops_early;
  // `normalization` how `length_penalty` (α) weighs lengths. `forced`
  // tokens (EncodedSource::target_prefix) were fed before the search
  // starts: they count towards the limit and the lengths, add nothing to
  // the log-probability, and begin every hypothesis; at the first step
  // after them only the best candidate may end (CTranslate2 drops the other
  // endings there, leaving their beams dead).
  SentenceSearch(int64_t beam_size, int64_t limit, double length_penalty,
                 bool stops_early = false,
                 LengthNormalization normalization = LengthNormalization::kGnmt,
                 std::vector<int64_t> forced = {});

  // Log-probability of each beam, beam_size entries; -inf for a dead beam.
  const std::vector<double>& beam_scores() const { return beam_scores_; }
  // The tokens of beam `beam` so far (without <s>).
  const std::vector<int64_t>& prefix(int64_t beam) const {
    return beams_[beam];
  }

  // Takes one step's candidates, best first: `count` (at least 2·beam_size,
  // or every candidate) totals of beam score plus token log-probability, and
  // their indices beam · vocab + token. Returns what each of the
  // beam_size next beams extends (a dead beam extends beam 0 with </s>).
  // With `positions` (one per beam), a token chosen from beam b aligns to
  // source position positions[b], and the hypotheses keep those
  // (Hypothesis::source_positions).
  std::vector<Extension> Advance(const double* totals, const int64_t* indices,
                                 int64_t count, int64_t vocab,
                                 const int32_t* positions = nullptr);

  // Tokens each live beam holds: the forced ones and one per Advance.
  int64_t steps() const { return steps_; }
  // Whether the next Advance is the first after forced tokens (where only
  // the best candidate may end).
  bool first_after_forced() const { return after_forced_; }

  // True once no live beam can beat the best finished hypotheses (with
  // stops_early: once beam_size hypotheses finished), or the length limit
  // is reached; Advance must not be called again.
  bool done() const { return done_; }

  // The best `n_best` finished hypotheses, best first.
  std::vector<Hypothesis> Best(int64_t n_best) const;

 private:
  bool SearchIsOver() const;
  // `log_probability` normalized for a hypothesis of `steps` tokens (</s>
  // included when it ended with one).
  double Normalized(double log_probability, int64_t steps) const;

  const int64_t beam_size_;
  const int64_t limit_;
  const double length_penalty_;
  const bool stops_early_;
  const LengthNormalization normalization_;
  int64_t steps_ = 0;
  bool after_forced_ = false;  // The next step is the first after `forced`.
  std::vector<std::vector<int64_t>> beams_;  // Prefixes, without <s>.
  // Each beam's source positions (Advance's), when given.
  std::vector<std::vector<int32_t>> beam_positions_;
  std::vector<double> beam_scores_;
  std::vector<Hypothesis> finished_;
  bool done_ = false;
};

// Batched beam search with the key/value cache: every sentence keeps
// `beam_size` rows in the batch, cache rows are reordered by the beam each
// hypothesis came from, and a sentence leaves the batch once no live beam can
// beat its `beam_size` best finished hypotheses or it reaches its length
// limit. Returns the `n_best` hypotheses of each source, best first, in input
// order. The reference the continuous decoder's beam groups are tested
// against, and the way to get n-best lists.
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
