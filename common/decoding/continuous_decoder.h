#ifndef FANYI_COMMON_DECODING_CONTINUOUS_DECODER_H_
#define FANYI_COMMON_DECODING_CONTINUOUS_DECODER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "common/decoding/finished_sentence.h"

namespace fanyi {

struct ContinuousBatch;
class StepGraphs;
class TransformerImpl;
struct DecodingOptions;

// One source sentence after tokenization and vocabulary lookup.
struct EncodedSource {
  std::vector<int64_t> ids;  // Source token ids, without <s> or </s>.
  int beam_size = 1;         // How to decode it: 1 = greedy, more = beam.
  // Next-best hypotheses wanted besides the best (beam search only; at
  // most beam_size - 1 come back).
  int alternatives = 0;
  // When above 0, no n-gram of this many tokens appears twice in a
  // translation (each hypothesis's, in a beam search): a token that would
  // repeat one is never chosen, as CTranslate2's no_repeat_ngram_size.
  int no_repeat_ngram = 0;
  // Target ids every translation of it starts with, after <s>, forced
  // whatever the model predicts (CTranslate2's target_prefix: the language
  // token of a multilingual model). They count towards the length limits
  // and the length normalization, add nothing to the log-probability (as
  // in CTranslate2), and are left out of the translation. At most the
  // length limit less one are forced.
  std::vector<int64_t> target_prefix;
  // Whether its translation comes with the source position each token
  // aligns to (Finished::source_positions).
  bool align = false;
};

// Decoding of a changing set of sentences, one step at a time (continuous
// batching, as in Orca's iteration-level scheduling): sentences join between
// steps (their encoder pass runs and their rows join the key/value cache)
// and leave as soon as they end, so no sentence waits for a whole batch to
// finish. A greedy sentence is one row; a beam search sentence is a group of
// `beam_size` rows (vLLM's sequence group), reordered within the group every
// step by the beam each hypothesis came from, and finished when no live beam
// can beat its best finished hypotheses. Greedy and beam sentences share
// every step. Keeps torch types out of its header. Not thread-safe: one
// thread drives it.
class ContinuousDecoder {
 public:
  // `model` must outlive the decoder; `options` sets each sentence's length
  // limit, `length_penalty` the GNMT α of beam search scores.
  ContinuousDecoder(TransformerImpl& model, const DecodingOptions& options,
                    double length_penalty = 1.0);
  ~ContinuousDecoder();

  // Encodes `sources` and adds their rows to the batch; returns one handle
  // per source, in order. Handles count up from 0. Throws
  // std::invalid_argument for a beam size below 1; when it throws, nothing
  // was added and the sentences already decoding are untouched.
  std::vector<int64_t> Add(const std::vector<EncodedSource>& sources);

  // A sentence that ended in a step (FinishedSentence).
  using Finished = FinishedSentence;

  // Runs one decoding step for every row in the batch (a window of up to
  // DecodingOptions::device_steps steps when every row is greedy, or every
  // row a beam search of one size past its first step); returns
  // the sentences that ended in it (</s>, a finished search or their length
  // limit), whose rows leave the batch. When it throws, the batch's state is
  // unknown: call Clear() before decoding again.
  std::vector<Finished> Step();

  // Drops sentences without finishing them (cancelled or expired requests),
  // with all their rows. Handles not in the batch are ignored.
  void Remove(const std::vector<int64_t>& handles);

  // Drops every sentence.
  void Clear();

  // Decodes `sources` to the end on a decoder with nothing in flight (the
  // offline use: evaluation, benchmarks); one translation per source, in
  // order, each with its position in `sources` as its handle.
  std::vector<Finished> DecodeAll(const std::vector<EncodedSource>& sources);

  // Sentences in the batch.
  int64_t active() const;
  // Rows in the batch: one per greedy sentence, and per beam search one
  // until its first step, then beam_size.
  int64_t rows() const;
  // The decoding step's CUDA graphs (their captures, replays and failure);
  // null off CUDA or with DecodingOptions::cuda_graphs off, unless
  // DecodingOptions::graph_dry_run.
  const StepGraphs* graphs() const;

 private:
  std::unique_ptr<ContinuousBatch> batch_;
};

// The target ids of each of `translations`, in order.
std::vector<std::vector<int64_t>> TargetIds(
    std::vector<ContinuousDecoder::Finished> translations);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_CONTINUOUS_DECODER_H_
