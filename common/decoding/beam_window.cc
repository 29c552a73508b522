#include "common/decoding/beam_window.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/topk.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/decoding/beam_candidates.h"
#include "common/decoding/decoding_options.h"
#include "common/model/decoder_state.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

// Throws unless `start` gives every one of `batch` rows to one beam, with a
// score per beam and a length and a limit per sentence.
void ValidateWindowStart(const BeamWindowStart& start, int64_t batch) {
  const size_t sentences = start.rows.size();
  bool valid = start.beam >= 1 && start.scores.size() == sentences &&
               start.lengths.size() == sentences &&
               start.limits.size() == sentences &&
               start.last_tokens.size() == static_cast<size_t>(batch) &&
               static_cast<int64_t>(sentences) * start.beam == batch;
  std::vector<char> seen(valid ? batch : 0, 0);
  for (size_t s = 0; valid && s < sentences; ++s) {
    valid = start.rows[s].size() == static_cast<size_t>(start.beam) &&
            start.scores[s].size() == static_cast<size_t>(start.beam);
    for (size_t b = 0; valid && b < start.rows[s].size(); ++b) {
      const int64_t row = start.rows[s][b];
      valid = row >= 0 && row < batch && !seen[row];
      if (valid) seen[row] = 1;
    }
  }
  if (!valid) {
    throw std::invalid_argument(
        "RunBeamWindow: " + std::to_string(sentences) + " sentences of beam " +
        std::to_string(start.beam) + " do not hold each of " +
        std::to_string(batch) + " rows once");
  }
}

}  // namespace

int64_t BeamWindowSteps(const BeamWindowStart& start, int64_t steps) {
  return WindowSteps(start.lengths, start.limits, steps);
}

BeamWindow RunBeamWindow(TransformerImpl& model, DecoderState& state,
                         StepGraphs* graphs, const BeamWindowStart& start,
                         int64_t steps) {
  const int64_t batch = state.batch_size();
  ValidateWindowStart(start, batch);
  if (steps < 1 || steps > BeamWindowSteps(start, steps)) {
    throw std::invalid_argument("RunBeamWindow: " + std::to_string(steps) +
                                " steps would take a search past its limit");
  }
  const int64_t beam = start.beam;
  const auto sentences = static_cast<int64_t>(start.rows.size());
  const int64_t vocab = model.config().target_vocab_size;
  // As TopBeamCandidates: 2 · beam, or every continuation of a tiny
  // vocabulary.
  const int64_t count = std::min(2 * beam, beam * vocab);
  const torch::TensorOptions ids = state.positions.options();
  std::vector<int64_t> flat_rows;
  std::vector<double> flat_scores;
  std::vector<int64_t> row_lengths(batch);
  for (int64_t s = 0; s < sentences; ++s) {
    flat_rows.insert(flat_rows.end(), start.rows[s].begin(),
                     start.rows[s].end());
    flat_scores.insert(flat_scores.end(), start.scores[s].begin(),
                       start.scores[s].end());
    for (int64_t row : start.rows[s]) row_lengths[row] = start.lengths[s];
  }
  const torch::Tensor rows =
      at::tensor(flat_rows, at::kLong).to(ids.device());  // [sentences·beam]
  const torch::Tensor row_table = rows.view({sentences, beam});
  // [sentences, beam] in double, as SentenceSearch keeps them.
  torch::Tensor scores = at::tensor(flat_scores, at::kDouble)
                             .to(ids.device())
                             .view({sentences, beam});
  torch::Tensor tokens =
      at::tensor(start.last_tokens, at::kLong).to(ids.device());
  torch::Tensor lengths = at::tensor(row_lengths, at::kLong).to(ids.device());
  // [steps, sentences, count]: each step's candidates.
  torch::Tensor totals_record =
      at::empty({steps, sentences, count}, ids.dtype(at::kDouble));
  torch::Tensor indices_record = at::empty({steps, sentences, count}, ids);
  // [count]: a candidate's rank, to keep the first `beam` extensions.
  const torch::Tensor ranks = at::arange(count, 0, -1, ids);
  state.wants_alignment = false;
  for (int64_t step = 0; step < steps; ++step) {
    // [batch, vocab]
    torch::Tensor logits = model.DecodeStep(tokens, &state, graphs);
    if (start.min_length > 0) {
      // As ContinuousBatch::HoldBackEnds.
      logits.select(1, Vocabulary::kEosId)
          .masked_fill_(lengths.lt(start.min_length),
                        -std::numeric_limits<float>::infinity());
    }
    // As TopBeamCandidates off the CPU: log-softmax in the logits' type,
    // plus the beam scores cast to it, the best `count` of each sentence's
    // beam · vocab continuations: [sentences·beam, vocab] ->
    // [sentences, beam · vocab] -> [sentences, count].
    const torch::Tensor log_probs =
        at::log_softmax(logits.index_select(0, rows), -1);
    const torch::Tensor continuations =
        (log_probs + scores.view({-1}).to(log_probs.scalar_type()).unsqueeze(1))
            .view({sentences, beam * vocab});
    auto [top, indices] = TopInIndexOrder(continuations, count);
    const torch::Tensor totals = top.to(at::kDouble);
    totals_record.select(0, step).copy_(totals);
    indices_record.select(0, step).copy_(indices);

    // As SentenceSearch::Advance: candidates up to the first infinite one;
    // of those, the first `beam` that are not </s> become the beams, the
    // rest of the beams dead (beam 0 with </s>, -inf).
    const torch::Tensor parents = at::div(indices, vocab, "trunc");
    const torch::Tensor words = indices - parents * vocab;
    const torch::Tensor finite =
        totals.isinf().logical_not().to(at::kLong).cumprod(-1).to(at::kBool);
    const torch::Tensor extends =
        finite.logical_and(words.ne(Vocabulary::kEosId));
    // [sentences, beam]: the first `beam` of them in rank order, then dead
    // ones.
    auto [order_keys, picked] =
        at::topk(ranks.masked_fill(extends.logical_not(), 0), beam, -1);
    const torch::Tensor dead = order_keys.eq(0);
    const torch::Tensor new_parents =
        parents.gather(-1, picked).masked_fill(dead, 0);
    const torch::Tensor new_words =
        words.gather(-1, picked).masked_fill(dead, Vocabulary::kEosId);
    scores = totals.gather(-1, picked)
                 .masked_fill(dead, -std::numeric_limits<double>::infinity());
    // Row rows[s][b] becomes the row of the beam it extends.
    torch::Tensor order = at::empty({batch}, ids);
    order.index_put_({rows}, row_table.gather(1, new_parents).view({-1}));
    state.PermuteRows(order);
    tokens = at::empty({batch}, ids);
    tokens.index_put_({rows}, new_words.view({-1}));
    lengths = lengths + 1;
  }
  // One copy to the host, [steps, sentences, 2 · count]: the totals' bits (a
  // double is as wide as an int64), then the indices.
  const torch::Tensor report =
      at::cat({totals_record.view(at::kLong), indices_record}, -1)
          .to(at::kCPU)
          .contiguous();
  const int64_t* values = report.data_ptr<int64_t>();
  BeamWindow window;
  window.steps = steps;
  window.count = count;
  window.vocab = vocab;
  window.totals.resize(steps);
  window.indices.resize(steps);
  for (int64_t step = 0; step < steps; ++step) {
    window.totals[step].resize(sentences * count);
    window.indices[step].resize(sentences * count);
    for (int64_t s = 0; s < sentences; ++s) {
      const int64_t* row = values + (step * sentences + s) * 2 * count;
      std::memcpy(&window.totals[step][s * count], row, count * sizeof(double));
      std::copy_n(row + count, count, &window.indices[step][s * count]);
    }
  }
  return window;
}

}  // namespace fanyi
