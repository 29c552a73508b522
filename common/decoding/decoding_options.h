// The limits and switches of a decoding run, apart from the model: the
// options greedy decoding, beam search and the continuous decoder share.
// Free of LibTorch, so that the text pipeline and the server can hold them.
#ifndef FANYI_COMMON_DECODING_DECODING_OPTIONS_H_
#define FANYI_COMMON_DECODING_DECODING_OPTIONS_H_

#include <cstdint>
#include <vector>

#include "common/model/length_normalization.h"

namespace fanyi {

// Limits on how long a translation may grow.
struct DecodingOptions {
  int64_t max_length = 256;  // Hard cap on generated tokens (</s> excluded).
  // No translation ends before this many tokens: </s> is held back until
  // then (CTranslate2's min_decoding_length). The ContinuousDecoder's; the
  // reference decoders (GreedyDecodeWithoutCache, BeamSearch) ignore it.
  int64_t min_length = 0;
  double length_ratio = 2.0;   // Per row: at most length_ratio * source_len
  int64_t length_offset = 10;  //   + length_offset tokens, below the cap.
  // Beam search: a sentence ends once beam_size hypotheses have ended (as
  // CTranslate2 with patience 1 and fairseq stop), instead of once no live
  // beam can still beat them (exact, but it often runs to the length
  // limit: docs/quality.md).
  bool beam_stops_early = false;
  LengthNormalization length_normalization = LengthNormalization::kGnmt;
  // On a CUDA device, replay the decoding step from CUDA graphs while a
  // batch keeps its rows (StepGraphs): the same tokens, one launch a step.
  // It pays where a decoder lives on from batch to batch (the server's
  // decode workers, fanyi-bench: docs/benchmarks.md); off here, for a
  // decoder of one call, whose captures would serve that call alone.
  bool cuda_graphs = false;
  // Steps a key comes at (the caches' layout, the batch's and sources'
  // powers of two: TransformerImpl::DecodeStep) before it is captured:
  // a capture costs more than a plain step (docs/benchmarks.md).
  int64_t cuda_graph_after_steps = 3;
  // On any device, instead of graphs: count what CUDA graphs would capture
  // and replay (a StepGraphs dry run), each step run eagerly in the form a
  // graph replays (fanyi-bench --graph_dry_run, the tests). The model's own
  // LibTorch step only: a CPU kernel's step has no graphs.
  bool graph_dry_run = false;
  // Steps run on the model's device between reads, for batches of greedy
  // sentences (RunGreedyWindow) or of beam searches of one beam size
  // (RunBeamWindow), so that the host does not wait on a GPU at every step;
  // sentences join and leave between such windows. 0: every step's choices
  // are made on the host, the CPU's way (a read costs nothing there, and a
  // sentence that ends early in a window would step on for nothing). Mixed
  // batches, forced prefixes, banned n-grams and alignments step on the host
  // either way.
  int64_t device_steps = 0;
};

// The most tokens a row whose source has `source_length` tokens may generate:
// min(max_length, length_ratio * source_length + length_offset).
int64_t MaxTargetLength(const DecodingOptions& options, int64_t source_length);

// The most steps a window of steps on the device may run, at most `steps`,
// for rows (or searches) with `lengths` tokens so far and `limits`: none
// past the step at which the one nearest its limit reaches it, so that no
// row feeds a position beyond its limit; at least 1 (one at its limit
// still takes a step to end, as on the host).
int64_t WindowSteps(const std::vector<int64_t>& lengths,
                    const std::vector<int64_t>& limits, int64_t steps);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_DECODING_OPTIONS_H_
