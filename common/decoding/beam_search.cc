#include "common/decoding/beam_search.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>

#include "common/decoding/beam_candidates.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

constexpr double kNegativeInfinity = -std::numeric_limits<double>::infinity();

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

}  // namespace

double LengthPenalty(int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

SentenceSearch::SentenceSearch(int64_t beam_size, int64_t limit,
                               double length_penalty, bool stops_early,
                               LengthNormalization normalization,
                               std::vector<int64_t> forced)
    : beam_size_(beam_size),
      limit_(limit),
      length_penalty_(length_penalty),
      stops_early_(stops_early ||
                   normalization == LengthNormalization::kCtranslate2),
      normalization_(normalization),
      steps_(static_cast<int64_t>(forced.size())),
      after_forced_(!forced.empty()),
      beams_(beam_size),
      beam_positions_(beam_size),
      beam_scores_(beam_size, kNegativeInfinity) {
  beams_[0] = std::move(forced);
  beam_scores_[0] = 0.0;
}

std::vector<SentenceSearch::Extension> SentenceSearch::Advance(
    const double* totals, const int64_t* indices, int64_t count, int64_t vocab,
    const int32_t* positions) {
  ++steps_;
  const bool after_forced = after_forced_;
  after_forced_ = false;
  std::vector<std::vector<int64_t>> beams;
  std::vector<std::vector<int32_t>> beam_positions;
  std::vector<double> scores;
  std::vector<Extension> extensions;
  // A beam that ends or goes on from `from`: its source positions.
  const auto positions_from = [&](int64_t from, bool with_token) {
    std::vector<int32_t> kept;
    if (positions == nullptr) return kept;
    kept = beam_positions_[from];
    if (with_token) kept.push_back(positions[from]);
    return kept;
  };
  for (int64_t c = 0;
       c < count && static_cast<int64_t>(beams.size()) < beam_size_; ++c) {
    const double score = totals[c];
    if (std::isinf(score)) break;  // Only dead beams are left.
    const int64_t from = indices[c] / vocab;
    const int64_t token = indices[c] % vocab;
    if (token == Vocabulary::kEosId && after_forced && c > 0) {
      beams.emplace_back();  // A dead beam in its place.
      beam_positions.emplace_back();
      scores.push_back(kNegativeInfinity);
      extensions.push_back({0, Vocabulary::kEosId});
      continue;
    }
    if (token == Vocabulary::kEosId) {
      // An ending counts only if it ranks among the best `beam_size`.
      if (c < beam_size_) {
        finished_.push_back({beams_[from], score, Normalized(score, steps_),
                             steps_, positions_from(from, false)});
      }
      continue;
    }
    std::vector<int64_t> prefix = beams_[from];
    prefix.push_back(token);
    beams.push_back(std::move(prefix));
    beam_positions.push_back(positions_from(from, true));
    scores.push_back(score);
    extensions.push_back({from, token});
  }
  if (steps_ >= limit_) {
    for (size_t b = 0; b < beams.size(); ++b) {
      finished_.push_back({beams[b], scores[b], Normalized(scores[b], steps_),
                           steps_, beam_positions[b]});
    }
    done_ = true;
  }
  // Fewer candidates than beams (a tiny vocabulary) leave dead beams.
  while (static_cast<int64_t>(beams.size()) < beam_size_) {
    beams.emplace_back();
    beam_positions.emplace_back();
    scores.push_back(kNegativeInfinity);
    extensions.push_back({0, Vocabulary::kEosId});
  }
  beams_ = std::move(beams);
  beam_positions_ = std::move(beam_positions);
  beam_scores_ = std::move(scores);
  done_ = done_ || SearchIsOver();
  return extensions;
}

// True when no live beam can still beat the `beam_size_` best finished
// hypotheses. A live beam's log-probability only falls as it grows, while
// the length penalty divides it by at most LengthPenalty(limit), so
// score / LengthPenalty(limit) bounds every normalised score it can reach.
// With one beam there is nothing to compare: the first ending wins, exactly
// as in greedy decoding.
bool SentenceSearch::SearchIsOver() const {
  if (static_cast<int64_t>(finished_.size()) < beam_size_) return false;
  if (beam_size_ == 1 || stops_early_) return true;
  std::vector<double> finished_scores;
  for (const Hypothesis& h : finished_) finished_scores.push_back(h.score);
  std::nth_element(finished_scores.begin(),
                   finished_scores.begin() + beam_size_ - 1,
                   finished_scores.end(), std::greater<double>());
  const double kth_best = finished_scores[beam_size_ - 1];
  const double best_live =
      *std::max_element(beam_scores_.begin(), beam_scores_.end());
  // Log-probabilities are <= 0, so the largest penalty gives the bound.
  return best_live / LengthPenalty(limit_, length_penalty_) <= kth_best;
}

double SentenceSearch::Normalized(double log_probability, int64_t steps) const {
  // Both count </s> among the tokens (CTranslate2 keeps it in its
  // hypotheses until they are ranked: include_eos_in_hypotheses).
  if (normalization_ == LengthNormalization::kGnmt) {
    return log_probability / LengthPenalty(steps, length_penalty_);
  }
  return log_probability /
         std::pow(static_cast<double>(steps), length_penalty_);
}

std::vector<Hypothesis> SentenceSearch::Best(int64_t n_best) const {
  std::vector<Hypothesis> best = finished_;
  std::stable_sort(best.begin(), best.end(),
                   [](const Hypothesis& a, const Hypothesis& b) {
                     return a.score > b.score;
                   });
  best.resize(std::min<size_t>(best.size(), n_best));
  return best;
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

  torch::Tensor source_ids =
      MakeSourceTensor(sources, model.config(), device);  // [b, src]
  torch::Tensor source_mask = PaddingMask(source_ids);    // [b, 1, 1, src]
  torch::Tensor memory = model.Encode(source_ids, source_mask);  // [b, src, d]
  // Every sentence gets `beam` rows: [b * beam, ...].
  torch::Tensor expand =
      at::arange(batch, at::TensorOptions(at::kLong).device(device))
          .repeat_interleave(beam);
  DecoderState state = model.StartDecoding(memory, source_mask, expand);

  // Sentence s of `active` has rows [s * beam, (s + 1) * beam).
  std::vector<std::pair<int64_t, SentenceSearch>> active;  // Input row, search.
  for (int64_t i = 0; i < batch; ++i) {
    active.emplace_back(
        i,
        SentenceSearch(beam, MaxTargetLength(options.limits, sources[i].size()),
                       options.length_penalty, options.limits.beam_stops_early,
                       options.limits.length_normalization));
  }
  torch::Tensor last_tokens =
      at::full({batch * beam}, Vocabulary::kBosId,
               at::TensorOptions(at::kLong).device(device));  // [rows]

  while (!active.empty()) {
    // [rows, vocab]
    const torch::Tensor logits = model.DecodeStep(last_tokens, &state);
    const int64_t vocab = logits.size(-1);
    std::vector<double> beam_scores;
    for (const auto& [row, search] : active) {
      beam_scores.insert(beam_scores.end(), search.beam_scores().begin(),
                         search.beam_scores().end());
    }
    const auto sentences = static_cast<int64_t>(active.size());
    // The best 2·beam continuations of each sentence always hold `beam`
    // that do not end, since at most `beam` of them are </s>.
    const BeamCandidates top = TopBeamCandidates(logits, {}, beam_scores, beam);

    std::vector<int64_t> parent_rows;
    std::vector<int64_t> next_tokens;
    std::vector<std::pair<int64_t, SentenceSearch>> still_active;
    for (int64_t s = 0; s < sentences; ++s) {
      auto& [input_row, search] = active[s];
      const auto extensions =
          search.Advance(top.totals.data() + s * top.count,
                         top.indices.data() + s * top.count, top.count, vocab);
      if (search.done()) {
        results[input_row] = search.Best(options.n_best);  // Its rows leave.
        continue;
      }
      for (const SentenceSearch::Extension& extension : extensions) {
        parent_rows.push_back(s * beam + extension.parent);
        next_tokens.push_back(extension.token);
      }
      still_active.push_back(std::move(active[s]));
    }
    active = std::move(still_active);
    if (active.empty()) break;
    // Row r of the next step continues parent_rows[r].
    state.ReorderRows(parent_rows);
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
  torch::Tensor log_probs = at::log_softmax(
      model.forward(MakeSourceTensor({source}, model.config(), device),
                    PadRows({input}, device)),
      -1);
  torch::Tensor expected = PadRows({output}, device).unsqueeze(-1);
  return log_probs.gather(-1, expected).sum().item<double>();
}

}  // namespace fanyi
