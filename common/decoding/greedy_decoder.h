#ifndef FANYI_COMMON_DECODING_GREEDY_DECODER_H_
#define FANYI_COMMON_DECODING_GREEDY_DECODER_H_

#include <cstdint>
#include <vector>

#include "common/model/transformer.h"

namespace fanyi {

// Limits on how long a translation may grow.
struct DecodingOptions {
  int64_t max_length = 256;    // Hard cap on generated tokens (</s> excluded).
  double length_ratio = 2.0;   // Per row: at most length_ratio * source_len
  int64_t length_offset = 10;  //   + length_offset tokens, below the cap.
  // Beam search: a sentence ends once beam_size hypotheses have ended (as
  // CTranslate2 with patience 1 and fairseq stop), instead of once no live
  // beam can still beat them (exact, but it often runs to the length
  // limit: docs/quality.md).
  bool beam_stops_early = false;
  // On a CUDA device, replay the decoding step from CUDA graphs while a
  // batch keeps its rows (StepGraphs): the same tokens, one launch a step.
  // It pays where a decoder lives on from batch to batch (the server's
  // decode workers, fanyi-bench: docs/benchmarks.md); off here, for a
  // decoder of one call, whose captures would serve that call alone.
  bool cuda_graphs = false;
  // Steps a batch keeps its rows (and caches) before its step is captured:
  // a capture costs more than a plain step (docs/benchmarks.md).
  int64_t cuda_graph_after_steps = 3;
};

// The most tokens a row whose source has `source_length` tokens may generate:
// min(max_length, length_ratio * source_length + length_offset).
int64_t MaxTargetLength(const DecodingOptions& options, int64_t source_length);

// Source id rows -> [batch, max_len + 1] on `device`: each row gets </s>
// appended and <pad> after it, the form the model is trained on.
torch::Tensor MakeSourceTensor(const std::vector<std::vector<int64_t>>& sources,
                               const torch::Device& device);

// Id rows -> [batch, max_len] on `device`, padded with <pad>.
torch::Tensor PadRows(const std::vector<std::vector<int64_t>>& rows,
                      const torch::Device& device);

// Batched greedy decoding with the key/value cache: sources of any lengths in
// one batch, each row stops at </s> or its length limit and leaves the batch.
// Returns target ids per source (without </s>), in input order.
std::vector<std::vector<int64_t>> GreedyDecode(
    TransformerImpl& model, const std::vector<std::vector<int64_t>>& sources,
    const DecodingOptions& options);

// The tutorials' decoder, kept as a reference and a speed floor: one sentence,
// no cache, the whole prefix recomputed at every step. With `run_all_steps`
// it also goes on past </s> to the length limit, as the tutorials' decoder
// does; the ids returned still end before the first </s>.
std::vector<int64_t> GreedyDecodeWithoutCache(
    TransformerImpl& model, const std::vector<int64_t>& source,
    const DecodingOptions& options, bool run_all_steps = false);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_GREEDY_DECODER_H_
