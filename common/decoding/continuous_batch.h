#ifndef FANYI_COMMON_DECODING_CONTINUOUS_BATCH_H_
#define FANYI_COMMON_DECODING_CONTINUOUS_BATCH_H_

#include <torch/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/decoding/beam_search.h"
#include "common/decoding/decoding_options.h"
#include "common/decoding/finished_sentence.h"
#include "common/model/decoder_state.h"
#include "common/model/step_graphs.h"
#include "common/model/transformer.h"

namespace fanyi {

// ContinuousDecoder's batch: the sentences being decoded, their rows of the
// decoder state, and what one step decides for each row (a forced prefix
// token, the greedy argmax, a beam search's best continuations) and how the
// rows then move.
struct ContinuousBatch {
  // One sentence in the batch: a greedy row or a beam search group of rows.
  struct Sentence {
    int64_t handle = 0;
    int64_t limit = 0;                     // Most tokens it may generate.
    std::vector<int64_t> target;           // Greedy: the tokens so far.
    double log_probability = 0;            // Greedy: of the tokens so far.
    std::optional<SentenceSearch> search;  // Beam search only.
    int beam = 1;                          // Beam size.
    int alternatives = 0;         // Next-best hypotheses to return (beam only).
    int no_repeat_ngram = 0;      // As EncodedSource's.
    std::vector<int64_t> forced;  // EncodedSource::target_prefix.
    size_t forced_fed = 0;        // Of those, the ones chosen so far.
    bool align = false;           // EncodedSource::align.
    int64_t source_length = 0;    // Tokens of its source.
    // Greedy, aligned: the source position of each token chosen so far (not
    // the forced ones).
    std::vector<int32_t> positions;
    // Batch row of each beam. One until a beam search's first step: its beams
    // would all be the same row, so it decodes once and fans out after (as
    // CTranslate2 does).
    std::vector<int64_t> rows;
  };

  // One batch row of the state.
  struct Row {
    Sentence* sentence;  // Owned by sentences.
    int64_t beam;        // Which of its sentence's beams (0 if greedy).
    int64_t last_token;  // Fed at the next step.
  };

  // A row that a beam search's first step adds: beam `beam` of `sentence`,
  // continuing batch row `parent` with `token`.
  struct AddedRow {
    Sentence* sentence;
    int64_t beam;
    int64_t parent;
    int64_t token;
  };

  // What one step decided for the batch rows: the row each row continues
  // (`order`, as DecoderState::ReorderRows takes it), its next token, the
  // rows that leave, and the rows that join after them.
  struct StepPlan {
    explicit StepPlan(size_t rows)
        : order(rows), next_token(rows), leaving(rows), forced(rows) {
      for (size_t i = 0; i < rows; ++i) order[i] = static_cast<int64_t>(i);
    }
    std::vector<int64_t> order;
    std::vector<int64_t> next_token;
    std::vector<char> leaving;
    std::vector<AddedRow> added;
    std::vector<char> forced;  // Rows whose token this step was forced.
  };

  // `model` must outlive the batch; as ContinuousDecoder's constructor.
  ContinuousBatch(TransformerImpl& model, const DecodingOptions& options,
                  double length_penalty);

  // Sets </s>'s logit to -inf, in `logits` [rows, vocab], for the rows of
  // sentences shorter than DecodingOptions::min_length (before the softmax,
  // as CTranslate2 holds it back).
  void HoldBackEnds(torch::Tensor& logits) const;
  // Sets to -inf, in `logits` [rows, vocab], each token that would repeat
  // an n-gram in its row's prefix, for sentences with no_repeat_ngram.
  // Returns, per row, what to add to the log-probabilities the selection
  // then computes (normalized over the allowed tokens only) to make them
  // the model's own: log P(allowed), 0 for a row with nothing banned;
  // empty when nothing was banned. (CTranslate2 bans after the softmax.)
  std::vector<double> BanRepeatedNgrams(torch::Tensor& logits) const;
  // Rows of sentences with target_prefix tokens still to choose: their
  // next token is the next of those, whatever the logits say (marked in
  // plan.forced); a greedy sentence's target gets it too. Returns whether
  // any row was forced. (A prefix is cut to the length limit less one at
  // Add, so no sentence ends while it is forced.)
  bool PlanForced(StepPlan& plan);
  // Greedy rows: the argmax of `logits` [rows, vocab] for each listed row;
  // `shifts` as BanRepeatedNgrams returns them.
  void PlanGreedy(const torch::Tensor& logits,
                  const std::vector<int64_t>& greedy_rows,
                  const std::vector<double>& shifts, StepPlan& plan,
                  std::vector<FinishedSentence>& finished);
  // Beam groups of one beam size, each sentence with `beam_rows` rows (the
  // beam, or 1 at its first step): the best continuations of their rows.
  void PlanBeams(const torch::Tensor& logits,
                 const std::vector<Sentence*>& group, int64_t beam,
                 int64_t beam_rows, const std::vector<double>& shifts,
                 StepPlan& plan, std::vector<FinishedSentence>& finished);
  // Whether every row can choose its tokens on the device for a window of
  // steps (RunGreedyWindow): greedy sentences only, none with target_prefix
  // tokens still to choose, banned n-grams or alignments.
  bool GreedyOnly() const;
  // Runs a window of at most options.device_steps greedy steps over every
  // row (RunGreedyWindow); the sentences that ended in it leave.
  void StepGreedyWindow(std::vector<FinishedSentence>& finished);
  // The beam size when every row can search on the device for a window of
  // steps (RunBeamWindow): beam searches of one beam size only, each past
  // its first step and its forced tokens, none with banned n-grams or
  // alignments; 0 otherwise.
  int64_t BeamOnly() const;
  // Runs a window of at most options.device_steps beam search steps over
  // every row (RunBeamWindow) of searches of `beam`, and hands each step's
  // candidates to the searches; the sentences whose search ended leave.
  void StepBeamWindow(int64_t beam, std::vector<FinishedSentence>& finished);
  // Moves the kept rows into place (rows and state) and points each
  // sentence at its rows again.
  void Apply(StepPlan& plan);
  // `sentence`, greedy and at its end (`ended`: on </s>, else at its
  // limit): its translation joins `finished`.
  void EndGreedy(Sentence& sentence, bool ended,
                 std::vector<FinishedSentence>& finished);
  // `sentence`, whose search is done: its best hypotheses join `finished`
  // and its rows leave in `plan`.
  void EndSearch(Sentence& sentence, StepPlan& plan,
                 std::vector<FinishedSentence>& finished);
  // Forgets sentences with no rows left.
  void Forget(const std::vector<int64_t>& handles);
  // After a step that gave alignments: row_positions for the rows of
  // aligned sentences, the source position each attended to most.
  void ReadAlignment();

  TransformerImpl& model;
  const DecodingOptions options;
  const double length_penalty;
  const torch::Device device;
  // While no sentence is active: empty (no layers), or with graphs, the
  // caches of the last batch without rows (DecoderState::DropRows).
  DecoderState state;
  // Null off CUDA or when turned off, unless options.graph_dry_run.
  std::unique_ptr<StepGraphs> graphs;
  std::vector<Row> rows;
  // By handle; Row::sentence points into it (stable across rehashing).
  std::unordered_map<int64_t, Sentence> sentences;
  int64_t beam_sentences = 0;     // Sentences with a search.
  int64_t aligned_sentences = 0;  // Sentences that align.
  // Per row, after a step that gave alignments (ReadAlignment).
  std::vector<int32_t> row_positions;
  int64_t next_handle = 0;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_CONTINUOUS_BATCH_H_
