#ifndef FANYI_COMMON_DECODING_BEAM_WINDOW_H_
#define FANYI_COMMON_DECODING_BEAM_WINDOW_H_

#include <cstdint>
#include <vector>

namespace fanyi {

struct DecoderState;
class StepGraphs;
class TransformerImpl;

// Where a window of beam search steps starts, for sentences that each hold
// `beam` batch rows (past their first step).
struct BeamWindowStart {
  int64_t beam = 0;
  // [sentences][beam]: the batch row of each beam; every batch row once.
  std::vector<std::vector<int64_t>> rows;
  // [sentences][beam]: each beam's score (SentenceSearch::beam_scores).
  std::vector<std::vector<double>> scores;
  // Per batch row, the token it feeds next.
  std::vector<int64_t> last_tokens;
  // Per sentence, the tokens its live beams hold, and the most it may.
  std::vector<int64_t> lengths;
  std::vector<int64_t> limits;
  int64_t min_length = 0;  // DecodingOptions::min_length.
};

// Each step's best candidates of each sentence, as TopBeamCandidates gives
// them and SentenceSearch::Advance takes them, read back from the device in
// one copy at the window's end.
struct BeamWindow {
  int64_t steps = 0;
  int64_t count = 0;  // Candidates per sentence and step (TopBeamCandidates).
  int64_t vocab = 0;  // The logits' width.
  // [steps][sentences · count], best first: beam score plus token
  // log-probability, and beam · vocab + token.
  std::vector<std::vector<double>> totals;
  std::vector<std::vector<int64_t>> indices;
};

// The most steps a window from `start` may run, at most `steps`
// (WindowSteps over its sentences).
int64_t BeamWindowSteps(const BeamWindowStart& start, int64_t steps);

// Runs `steps` beam search steps of every row of `state` on the model's
// device without reading anything back until the last: each step's
// candidates (the best 2 · beam of beam score plus log-softmax, </s> held
// back below `start.min_length` tokens, equal totals in index order), the
// beams they extend chosen there as SentenceSearch::Advance chooses them
// (the first `beam` candidates that are not </s>, dead beams after them),
// and the rows reordered within each sentence by the beam each new beam
// extends (DecoderState::PermuteRows). The caller hands each step's
// candidates to its searches, which end hypotheses and decide when a search
// is over; a sentence whose search ended in the window stepped on to its end
// for nothing. Throws std::invalid_argument for a `start` that does not
// cover the batch's rows once each, or `steps` outside 1 and
// BeamWindowSteps(start, steps).
BeamWindow RunBeamWindow(TransformerImpl& model, DecoderState& state,
                         StepGraphs* graphs, const BeamWindowStart& start,
                         int64_t steps);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_BEAM_WINDOW_H_
