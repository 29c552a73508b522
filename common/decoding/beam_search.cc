#include "common/decoding/beam_search.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/topk.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

// A sentence being searched: its live beams and the hypotheses that ended.
struct SentenceSearch {
  int64_t input_row = 0;                    // Index into the caller's sources.
  int64_t limit = 0;                        // Most tokens it may generate.
  std::vector<std::vector<int64_t>> beams;  // Live prefixes, without <s>.
  std::vector<double> beam_scores;          // Their log-probabilities.
  std::vector<Hypothesis> finished;
};

void Validate(const BeamSearchOptions& options) {
  if (options.beam_size < 1) {
    throw std::invalid_argument("beam_size must be at least 1");
  }
  if (options.n_best < 1 || options.n_best > options.beam_size) {
    throw std::invalid_argument("n_best must be between 1 and beam_size");
  }
  if (options.length_penalty < 0) {
    throw std::invalid_argument("length_penalty must not be negative");
  }
}

// True when no live beam can still beat the `beam` best finished
// hypotheses. A live beam's log-probability only falls as it grows, while the
// length penalty divides it by at most LengthPenalty(limit), so
// score / LengthPenalty(limit) bounds every normalised score it can reach.
// With one beam there is nothing to compare: the first ending wins, exactly
// as in greedy decoding.
bool SearchIsOver(const SentenceSearch& sentence, int64_t beam,
                  double length_penalty) {
  if (static_cast<int64_t>(sentence.finished.size()) < beam) return false;
  if (beam == 1 || sentence.beam_scores.empty()) return true;
  std::vector<double> finished_scores;
  for (const Hypothesis& h : sentence.finished) {
    finished_scores.push_back(h.score);
  }
  std::nth_element(finished_scores.begin(), finished_scores.begin() + beam - 1,
                   finished_scores.end(), std::greater<double>());
  const double kth_best = finished_scores[beam - 1];
  const double best_live = *std::max_element(sentence.beam_scores.begin(),
                                             sentence.beam_scores.end());
  // Log-probabilities are <= 0, so the largest penalty gives the bound.
  return best_live / LengthPenalty(sentence.limit, length_penalty) <= kth_best;
}

std::vector<Hypothesis> BestHypotheses(std::vector<Hypothesis> finished,
                                       int64_t n_best) {
  std::stable_sort(finished.begin(), finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) {
                     return a.score > b.score;
                   });
  finished.resize(std::min<size_t>(finished.size(), n_best));
  return finished;
}

}  // namespace

double LengthPenalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<std::vector<Hypothesis>> BeamSearch(
    TransformerImpl& model, const std::vector<std::vector<int64_t>>& sources,
    const BeamSearchOptions& options) {
  Validate(options);
  std::vector<std::vector<Hypothesis>> results(sources.size());
  if (sources.empty()) return results;
  c10::InferenceMode inference;
  const torch::Device device = model.parameters().front().device();
  const int64_t beam = options.beam_size;
  const auto batch = static_cast<int64_t>(sources.size());

  torch::Tensor source_ids = MakeSourceTensor(sources, device);  // [b, src]
  torch::Tensor source_mask = PaddingMask(source_ids);  // [b, 1, 1, src]
  torch::Tensor memory = model.Encode(source_ids, source_mask);  // [b, src, d]
  // Every sentence gets `beam` rows: [b * beam, ...].
  torch::Tensor expand =
      at::arange(batch, at::TensorOptions(at::kLong).device(device))
          .repeat_interleave(beam);
  DecoderState state = model.StartDecoding(memory.index_select(0, expand),
                                           source_mask.index_select(0, expand));

  std::vector<SentenceSearch> active(sources.size());
  for (int64_t i = 0; i < batch; ++i) {
    active[i].input_row = i;
    active[i].limit = MaxTargetLength(options.limits, sources[i].size());
    active[i].beams.assign(beam, {});
    // Only the first beam is live at the start, so the first step does not
    // pick the same token `beam` times.
    active[i].beam_scores.assign(beam, kNegativeInfinity);
    active[i].beam_scores[0] = 0.0;
  }
  torch::Tensor last_tokens =
      at::full({batch * beam}, Vocabulary::kBosId,
               at::TensorOptions(at::kLong).device(device));  // [rows]

  for (int64_t step = 1; !active.empty(); ++step) {
    // [rows, vocab]
    torch::Tensor log_probs =
        at::log_softmax(model.DecodeStep(last_tokens, &state), -1);
    const int64_t vocab = log_probs.size(-1);
    std::vector<double> beam_scores;
    for (const SentenceSearch& sentence : active) {
      beam_scores.insert(beam_scores.end(), sentence.beam_scores.begin(),
                         sentence.beam_scores.end());
    }
    torch::Tensor previous =
        at::tensor(beam_scores, at::kDouble).to(log_probs.options());
    const auto sentences = static_cast<int64_t>(active.size());
    // [sentences, beam * vocab]: every continuation of every live beam.
    torch::Tensor totals =
        (log_probs + previous.unsqueeze(1)).view({sentences, beam * vocab});
    // The best 2·beam candidates always hold `beam` that do not end, since
    // at most `beam` of them are </s>.
    auto [top_scores, top_indices] =
        at::topk(totals, std::min(2 * beam, beam * vocab), -1);
    top_scores = top_scores.to(at::kCPU, at::kDouble);
    top_indices = top_indices.to(at::kCPU);
    const auto scores = top_scores.accessor<double, 2>();
    const auto indices = top_indices.accessor<int64_t, 2>();

    std::vector<int64_t> parent_rows;
    std::vector<int64_t> next_tokens;
    std::vector<SentenceSearch> still_active;
    for (int64_t s = 0; s < sentences; ++s) {
      SentenceSearch& sentence = active[s];
      std::vector<std::vector<int64_t>> beams;
      std::vector<double> kept_scores;
      for (int64_t c = 0;
           c < top_scores.size(1) && static_cast<int64_t>(beams.size()) < beam;
           ++c) {
        const double score = scores[s][c];
        if (std::isinf(score)) break;
        const int64_t from = indices[s][c] / vocab;
        const int64_t token = indices[s][c] % vocab;
        if (token == Vocabulary::kEosId) {
          // An ending counts only if it ranks among the best `beam`.
          if (c < beam) {
            sentence.finished.push_back(
                {sentence.beams[from], score,
                 score / LengthPenalty(step, options.length_penalty)});
          }
          continue;
        }
        std::vector<int64_t> prefix = sentence.beams[from];
        prefix.push_back(token);
        beams.push_back(std::move(prefix));
        kept_scores.push_back(score);
        parent_rows.push_back(s * beam + from);
        next_tokens.push_back(token);
      }
      sentence.beams = std::move(beams);
      sentence.beam_scores = std::move(kept_scores);
      const bool at_limit = step >= sentence.limit;
      if (at_limit) {
        for (size_t b = 0; b < sentence.beams.size(); ++b) {
          sentence.finished.push_back(
              {sentence.beams[b], sentence.beam_scores[b],
               sentence.beam_scores[b] /
                   LengthPenalty(step, options.length_penalty)});
        }
      }
      if (at_limit || SearchIsOver(sentence, beam, options.length_penalty)) {
        results[sentence.input_row] =
            BestHypotheses(std::move(sentence.finished), options.n_best);
        // Its rows leave the batch.
        parent_rows.resize(parent_rows.size() - sentence.beams.size());
        next_tokens.resize(next_tokens.size() - sentence.beams.size());
        continue;
      }
      still_active.push_back(std::move(sentence));
    }
    active = std::move(still_active);
    if (active.empty()) break;
    // Reorder the cache: row r of the next step continues parent_rows[r].
    state.SelectRows(at::tensor(parent_rows, at::kLong).to(device));
    last_tokens = at::tensor(next_tokens, at::kLong).to(device);
  }
  return results;
}

double SequenceLogProbability(TransformerImpl& model,
                              const std::vector<int64_t>& source,
                              const std::vector<int64_t>& target) {
  c10::InferenceMode inference;
  const torch::Device device = model.parameters().front().device();
  std::vector<int64_t> input = {Vocabulary::kBosId};
  input.insert(input.end(), target.begin(), target.end());
  std::vector<int64_t> output = target;
  output.push_back(Vocabulary::kEosId);
  // [1, tgt_len + 1, vocab]
  torch::Tensor log_probs =
      at::log_softmax(model.forward(MakeSourceTensor({source}, device),
                                    PadRows({input}, device)),
                      -1);
  torch::Tensor expected = PadRows({output}, device).unsqueeze(-1);
  return log_probs.gather(-1, expected).sum().item<double>();
}

}  // namespace fanyi
