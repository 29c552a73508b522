#ifndef FANYI_COMMON_DECODING_BEAM_CANDIDATES_H_
#define FANYI_COMMON_DECODING_BEAM_CANDIDATES_H_

#include <torch/types.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace fanyi {

// The best continuations of beam searches after one step, as
// SentenceSearch::Advance takes them.
struct BeamCandidates {
  int64_t count = 0;             // Candidates per sentence.
  std::vector<double> totals;    // [sentences, count]: best first.
  std::vector<int64_t> indices;  // [sentences, count]: beam · vocab + token.
};

// For each of the sentences whose `beam_rows` rows are `rows` of `logits`
// [batch, vocab] (consecutive per sentence; empty: every row, in order),
// the best min(2·beam, beam_rows·vocab) totals of the row's score in
// `beam_scores` (one per row, -inf for a dead beam) plus the token's
// log-probability (log-softmax of the row's logits). Equal totals keep the
// lower index first. `beam_rows` is the beam (0 means so), or 1 for a
// search's first step, whose beams would all be the same row.
//
// On the CPU with float logits this is one log-sum-exp per row and then
// plain loops: one pass over each row keeping the best few, in double
// precision.
// log_softmax, the addition and topk as separate ATen calls cost 11% of the
// server's time under 64 beam-4 clients (topk alone 6.5%), for a few
// candidates out of beam · vocab. Elsewhere those ATen calls run. Throws
// std::invalid_argument unless there is one beam score per row and the rows
// make whole beams.
BeamCandidates TopBeamCandidates(const torch::Tensor& logits,
                                 const std::vector<int64_t>& rows,
                                 const std::vector<double>& beam_scores,
                                 int64_t beam, int64_t beam_rows = 0);

// The best `count` of each row of `totals` [rows, n], best first, with
// their indices: at::topk, with equal totals among them put in index order
// as TopOnCpu has them (at::topk leaves their order unspecified; a tie at
// the cut itself is still topk's to break). Both of [rows, count], on
// `totals`' device.
std::pair<torch::Tensor, torch::Tensor> TopInIndexOrder(
    const torch::Tensor& totals, int64_t count);

// A greedy row's next token: the best of its row, with its log-probability.
struct BestToken {
  int64_t token = 0;
  double log_probability = 0;
};

// The best token of each of `rows` of `logits` [batch, vocab] (empty: every
// row, in order), with its log-probability (log-softmax of the row). Ties go
// to the lowest index and NaN counts as the largest value, as at::argmax has
// it. On the CPU with float logits, a plain loop per row: at::argmax over
// [32, vocab] cost more than a packed step's products for one row.
std::vector<BestToken> BestTokens(const torch::Tensor& logits,
                                  const std::vector<int64_t>& rows);

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_BEAM_CANDIDATES_H_
