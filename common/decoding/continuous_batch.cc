#include "common/decoding/continuous_batch.h"

#include <ATen/TensorIndexing.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/tensor.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "common/decoding/beam_candidates.h"
#include "common/decoding/beam_window.h"
#include "common/decoding/greedy_window.h"
#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

// `done`, a translation of `sentence`, without the forced tokens it (and
// each alternative) starts with, and without their count among its scored
// tokens (they add nothing to its log-probability).
FinishedSentence Forced(const ContinuousBatch::Sentence& sentence,
                        FinishedSentence done) {
  const auto forced = static_cast<std::ptrdiff_t>(sentence.forced.size());
  if (forced == 0) return done;
  const auto strip = [forced](std::vector<int64_t>& ids) {
    ids.erase(
        ids.begin(),
        ids.begin() + std::min<std::ptrdiff_t>(
                          forced, static_cast<std::ptrdiff_t>(ids.size())));
  };
  strip(done.target_ids);
  for (std::vector<int64_t>& alternative : done.alternatives) {
    strip(alternative);
  }
  done.scored_tokens = std::max<int64_t>(done.scored_tokens - forced, 0);
  return done;
}

}  // namespace

ContinuousBatch::ContinuousBatch(TransformerImpl& model,
                                 const DecodingOptions& options,
                                 double length_penalty)
    : model(model),
      options(options),
      length_penalty(length_penalty),
      device(model.parameters().front().device()) {
  if (options.graph_dry_run) {
    graphs = std::make_unique<StepGraphs>(options.cuda_graph_after_steps, 32,
                                          /*dry_run=*/true);
  } else if (options.cuda_graphs && device.is_cuda() &&
             StepGraphs::Available()) {
    graphs = std::make_unique<StepGraphs>(options.cuda_graph_after_steps);
  }
}

void ContinuousBatch::ReadAlignment() {
  if (aligned_sentences == 0) return;  // No row reads row_positions.
  row_positions.assign(rows.size(), 0);
  if (!state.alignment.defined()) return;
  const torch::Tensor alignment = state.alignment.contiguous();
  const int64_t width = alignment.size(1);
  if (width == 0) return;
  const float* weights = alignment.data_ptr<float>();
  for (size_t r = 0; r < rows.size(); ++r) {
    const Sentence& sentence = *rows[r].sentence;
    if (!sentence.align) continue;
    // The first of the largest, over the source's own tokens (not </s>).
    const float* row = weights + static_cast<int64_t>(r) * width;
    const int64_t length = std::min(sentence.source_length, width);
    row_positions[r] = static_cast<int32_t>(
        std::max_element(row, row + std::max<int64_t>(length, 1)) - row);
  }
}

void ContinuousBatch::HoldBackEnds(torch::Tensor& logits) const {
  if (options.min_length <= 0) return;
  std::vector<int64_t> short_rows;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Sentence& sentence = *rows[r].sentence;
    const size_t length = sentence.search.has_value()
                              ? sentence.search->prefix(rows[r].beam).size()
                              : sentence.target.size();
    if (static_cast<int64_t>(length) < options.min_length) {
      short_rows.push_back(static_cast<int64_t>(r));
    }
  }
  if (short_rows.empty()) return;
  const torch::Tensor row_ids = at::tensor(short_rows, at::kLong).to(device);
  logits.index_put_({row_ids, at::full_like(row_ids, Vocabulary::kEosId)},
                    -std::numeric_limits<float>::infinity());
}

std::vector<double> ContinuousBatch::BanRepeatedNgrams(
    torch::Tensor& logits) const {
  std::vector<int64_t> banned_rows;
  std::vector<int64_t> banned_tokens;
  for (size_t r = 0; r < rows.size(); ++r) {
    const Sentence& sentence = *rows[r].sentence;
    const int64_t n = sentence.no_repeat_ngram;
    if (n <= 0) continue;
    const std::vector<int64_t>& prefix =
        sentence.search.has_value() ? sentence.search->prefix(rows[r].beam)
                                    : sentence.target;
    const auto length = static_cast<int64_t>(prefix.size());
    if (length < n - 1) continue;
    // Every earlier n-gram whose first n - 1 tokens are the prefix's last
    // n - 1 bans its last token: O(length · n) a row.
    const int64_t tail = length - (n - 1);
    for (int64_t i = 0; i + n - 1 < length; ++i) {
      if (std::equal(prefix.begin() + i, prefix.begin() + i + n - 1,
                     prefix.begin() + tail)) {
        banned_rows.push_back(static_cast<int64_t>(r));
        banned_tokens.push_back(prefix[i + n - 1]);
      }
    }
  }
  if (banned_rows.empty()) return {};
  std::vector<int64_t> changed = banned_rows;  // Sorted: found row by row.
  changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
  const torch::Tensor changed_rows = at::tensor(changed, at::kLong).to(device);
  // [changed] each: log Σ e^logit over the row, before and after the ban.
  const torch::Tensor before =
      at::logsumexp(logits.index_select(0, changed_rows).to(at::kFloat), -1);
  logits.index_put_({at::tensor(banned_rows, at::kLong).to(device),
                     at::tensor(banned_tokens, at::kLong).to(device)},
                    -std::numeric_limits<float>::infinity());
  const torch::Tensor after =
      at::logsumexp(logits.index_select(0, changed_rows).to(at::kFloat), -1);
  const torch::Tensor shift =
      (after - before).to(at::kCPU, at::kDouble).contiguous();
  std::vector<double> shifts(rows.size(), 0.0);
  for (size_t k = 0; k < changed.size(); ++k) {
    shifts[changed[k]] = shift.data_ptr<double>()[k];
  }
  return shifts;
}

bool ContinuousBatch::PlanForced(StepPlan& plan) {
  bool any = false;
  for (size_t r = 0; r < rows.size(); ++r) {
    Sentence& sentence = *rows[r].sentence;
    if (sentence.forced_fed >= sentence.forced.size()) continue;
    const int64_t token = sentence.forced[sentence.forced_fed++];
    plan.next_token[r] = token;
    plan.forced[r] = 1;
    if (!sentence.search.has_value()) sentence.target.push_back(token);
    any = true;
  }
  return any;
}

void ContinuousBatch::PlanGreedy(const torch::Tensor& logits,
                                 const std::vector<int64_t>& greedy_rows,
                                 const std::vector<double>& shifts,
                                 StepPlan& plan,
                                 std::vector<FinishedSentence>& finished) {
  if (greedy_rows.empty()) return;
  // No rows picked out when every row is greedy, in order.
  const std::vector<BestToken> next = BestTokens(
      logits,
      greedy_rows.size() == rows.size() ? std::vector<int64_t>{} : greedy_rows);
  for (size_t i = 0; i < greedy_rows.size(); ++i) {
    const int64_t row = greedy_rows[i];
    Sentence& sentence = *rows[row].sentence;
    sentence.log_probability +=
        next[i].log_probability + (shifts.empty() ? 0.0 : shifts[row]);
    const bool ended = next[i].token == Vocabulary::kEosId;
    if (!ended) {
      sentence.target.push_back(next[i].token);
      if (sentence.align) sentence.positions.push_back(row_positions[row]);
      plan.next_token[row] = next[i].token;
    }
    if (ended ||
        static_cast<int64_t>(sentence.target.size()) >= sentence.limit) {
      EndGreedy(sentence, ended, finished);
      plan.leaving[row] = 1;
    }
  }
}

void ContinuousBatch::PlanBeams(const torch::Tensor& logits,
                                const std::vector<Sentence*>& group,
                                int64_t beam, int64_t beam_rows,
                                const std::vector<double>& shifts,
                                StepPlan& plan,
                                std::vector<FinishedSentence>& finished) {
  std::vector<int64_t> group_rows;
  std::vector<double> scores;
  for (const Sentence* sentence : group) {
    group_rows.insert(group_rows.end(), sentence->rows.begin(),
                      sentence->rows.end());
    const std::vector<double>& beam_scores = sentence->search->beam_scores();
    for (int64_t b = 0; b < beam_rows; ++b) {
      scores.push_back(beam_scores[b] +
                       (shifts.empty() ? 0.0 : shifts[sentence->rows[b]]));
    }
  }
  // The group's rows of `logits`; none picked out when the group holds
  // every row in order (a batch of beam searches only, as offline).
  bool every_row = group_rows.size() == rows.size();
  for (size_t i = 0; i < group_rows.size() && every_row; ++i) {
    every_row = group_rows[i] == static_cast<int64_t>(i);
  }
  if (every_row) group_rows.clear();
  const BeamCandidates top =
      TopBeamCandidates(logits, group_rows, scores, beam, beam_rows);
  const int64_t vocab = logits.size(-1);
  const auto sentences_in_group = static_cast<int64_t>(group.size());
  for (int64_t s = 0; s < sentences_in_group; ++s) {
    Sentence& sentence = *group[s];
    std::vector<int32_t> positions;
    if (sentence.align) {
      for (int64_t b = 0; b < beam_rows; ++b) {
        positions.push_back(row_positions[sentence.rows[b]]);
      }
    }
    const auto extensions = sentence.search->Advance(
        top.totals.data() + s * top.count, top.indices.data() + s * top.count,
        top.count, vocab, sentence.align ? positions.data() : nullptr);
    if (sentence.search->done()) {
      EndSearch(sentence, plan, finished);
      continue;
    }
    for (int64_t b = 0; b < beam; ++b) {
      const int64_t parent = sentence.rows[extensions[b].parent];
      if (b < beam_rows) {
        plan.order[sentence.rows[b]] = parent;
        plan.next_token[sentence.rows[b]] = extensions[b].token;
      } else {
        plan.added.push_back({&sentence, b, parent, extensions[b].token});
      }
    }
  }
}

bool ContinuousBatch::GreedyOnly() const {
  if (beam_sentences > 0 || aligned_sentences > 0) return false;
  for (const Row& row : rows) {
    const Sentence& sentence = *row.sentence;
    if (sentence.no_repeat_ngram > 0 ||
        sentence.forced_fed < sentence.forced.size()) {
      return false;
    }
  }
  return true;
}

void ContinuousBatch::StepGreedyWindow(
    std::vector<FinishedSentence>& finished) {
  GreedyWindowStart start;
  start.min_length = options.min_length;
  for (const Row& row : rows) {
    start.last_tokens.push_back(row.last_token);
    start.lengths.push_back(static_cast<int64_t>(row.sentence->target.size()));
    start.limits.push_back(row.sentence->limit);
  }
  const GreedyWindow window =
      RunGreedyWindow(model, state, graphs.get(), start,
                      GreedyWindowSteps(start, options.device_steps));
  StepPlan plan(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    Sentence& sentence = *rows[r].sentence;
    const std::vector<int64_t>& tokens = window.tokens[r];
    sentence.target.insert(sentence.target.end(), tokens.begin(), tokens.end());
    sentence.log_probability += window.log_probabilities[r];
    plan.next_token[r] = tokens.empty() ? rows[r].last_token : tokens.back();
    if (!window.finished[r]) continue;
    EndGreedy(sentence, window.ended[r] != 0, finished);
    plan.leaving[r] = 1;
  }
  Apply(plan);
}

void ContinuousBatch::EndGreedy(Sentence& sentence, bool ended,
                                std::vector<FinishedSentence>& finished) {
  FinishedSentence done{sentence.handle, std::move(sentence.target)};
  done.log_probability = sentence.log_probability;
  done.scored_tokens =
      static_cast<int64_t>(done.target_ids.size()) + (ended ? 1 : 0);
  done.source_positions = std::move(sentence.positions);
  finished.push_back(Forced(sentence, std::move(done)));
}

void ContinuousBatch::EndSearch(Sentence& sentence, StepPlan& plan,
                                std::vector<FinishedSentence>& finished) {
  std::vector<Hypothesis> best =
      sentence.search->Best(1 + sentence.alternatives);
  FinishedSentence done{sentence.handle, std::move(best.front().ids)};
  done.log_probability = best.front().log_probability;
  done.scored_tokens = best.front().scored_tokens;
  done.source_positions = std::move(best.front().source_positions);
  for (std::size_t k = 1; k < best.size(); ++k) {
    done.alternatives.push_back(std::move(best[k].ids));
    if (sentence.align) {
      done.alternative_positions.push_back(std::move(best[k].source_positions));
    }
  }
  finished.push_back(Forced(sentence, std::move(done)));
  for (int64_t row : sentence.rows) plan.leaving[row] = 1;
}

int64_t ContinuousBatch::BeamOnly() const {
  if (aligned_sentences > 0 || rows.empty() ||
      beam_sentences != static_cast<int64_t>(sentences.size())) {
    return 0;
  }
  const int64_t beam = rows.front().sentence->beam;
  for (const auto& [handle, sentence] : sentences) {
    if (sentence.beam != beam ||
        static_cast<int64_t>(sentence.rows.size()) != beam ||
        sentence.no_repeat_ngram > 0 ||
        sentence.forced_fed < sentence.forced.size() ||
        sentence.search->first_after_forced() || sentence.search->done()) {
      return 0;
    }
  }
  return beam;
}

void ContinuousBatch::StepBeamWindow(int64_t beam,
                                     std::vector<FinishedSentence>& finished) {
  BeamWindowStart start;
  start.beam = beam;
  start.min_length = options.min_length;
  std::vector<Sentence*> searched;
  for (auto& [handle, sentence] : sentences) {
    searched.push_back(&sentence);
    start.rows.push_back(sentence.rows);
    start.scores.push_back(sentence.search->beam_scores());
    // Its live beams' tokens, even when none is left alive.
    start.lengths.push_back(sentence.search->steps());
    start.limits.push_back(sentence.limit);
  }
  for (const Row& row : rows) start.last_tokens.push_back(row.last_token);
  const BeamWindow window =
      RunBeamWindow(model, state, graphs.get(), start,
                    BeamWindowSteps(start, options.device_steps));
  StepPlan plan(rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    plan.next_token[r] = rows[r].last_token;
  }
  for (size_t s = 0; s < searched.size(); ++s) {
    Sentence& sentence = *searched[s];
    SentenceSearch& search = *sentence.search;
    for (int64_t step = 0; step < window.steps && !search.done(); ++step) {
      const std::vector<SentenceSearch::Extension> extensions =
          search.Advance(window.totals[step].data() + s * window.count,
                         window.indices[step].data() + s * window.count,
                         window.count, window.vocab);
      // The device moved beam b's row to where it extends from, as here.
      for (int64_t b = 0; b < beam; ++b) {
        plan.next_token[sentence.rows[b]] = extensions[b].token;
      }
    }
    if (search.done()) EndSearch(sentence, plan, finished);
  }
  Apply(plan);
}

void ContinuousBatch::Apply(StepPlan& plan) {
  const size_t before = rows.size();
  for (size_t i = 0; i < before; ++i) rows[i].last_token = plan.next_token[i];
  // Beams fanning out join at the end; they never leave.
  for (const AddedRow& added : plan.added) {
    plan.order.push_back(added.parent);
    plan.leaving.push_back(0);
    rows.push_back({added.sentence, added.beam, added.token});
    std::vector<int64_t>& beam_rows = added.sentence->rows;
    if (static_cast<int64_t>(beam_rows.size()) <= added.beam) {
      beam_rows.resize(added.beam + 1);
    }
  }
  // Leaving rows are filled by the last rows, from the highest down, so the
  // last row is never one still to leave.
  for (size_t r = before; r-- > 0;) {
    if (!plan.leaving[r]) continue;
    plan.order[r] = plan.order.back();
    plan.order.pop_back();
    rows[r] = rows.back();
    rows.pop_back();
  }
  if (rows.empty()) {
    // With graphs, the next batch is written into the same caches, so that
    // their graphs replay for it; otherwise the caches' memory goes.
    if (graphs != nullptr && graphs->failure().empty() &&
        !state.layers.empty()) {
      state.DropRows();
    } else {
      state = DecoderState();
    }
    return;
  }
  bool moved = rows.size() != before;
  for (size_t i = 0; i < plan.order.size() && !moved; ++i) {
    moved = plan.order[i] != static_cast<int64_t>(i);
  }
  if (moved) state.ReorderRows(plan.order);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].sentence->rows[rows[i].beam] = static_cast<int64_t>(i);
  }
}

void ContinuousBatch::Forget(const std::vector<int64_t>& handles) {
  for (int64_t handle : handles) {
    auto it = sentences.find(handle);
    if (it == sentences.end()) continue;
    if (it->second.search.has_value()) --beam_sentences;
    if (it->second.align) --aligned_sentences;
    sentences.erase(it);
  }
}

}  // namespace fanyi
