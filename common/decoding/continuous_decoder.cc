#include "common/decoding/continuous_decoder.h"

#include <ATen/TensorIndexing.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "common/decoding/beam_candidates.h"
#include "common/decoding/beam_search.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/decoder_state.h"
#include "common/model/step_graphs.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

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
  Sentence* sentence;  // Owned by Impl::sentences.
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

// `done`, a translation of `sentence`, without the forced tokens it (and
// each alternative) starts with, and without their count among its scored
// tokens (they add nothing to its log-probability).
ContinuousDecoder::Finished Forced(const Sentence& sentence,
                                   ContinuousDecoder::Finished done) {
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

struct ContinuousDecoder::Impl {
  Impl(TransformerImpl& model, const DecodingOptions& options,
       double length_penalty)
      : model(model),
        options(options),
        length_penalty(length_penalty),
        device(model.parameters().front().device()) {
    if (options.cuda_graphs && device.is_cuda() && StepGraphs::Available()) {
      graphs = std::make_unique<StepGraphs>(options.cuda_graph_after_steps);
    }
  }

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
                  std::vector<Finished>& finished);
  // Beam groups of one beam size, each sentence with `beam_rows` rows (the
  // beam, or 1 at its first step): the best continuations of their rows.
  void PlanBeams(const torch::Tensor& logits,
                 const std::vector<Sentence*>& group, int64_t beam,
                 int64_t beam_rows, const std::vector<double>& shifts,
                 StepPlan& plan, std::vector<Finished>& finished);
  // Moves the kept rows into place (rows and state) and points each
  // sentence at its rows again.
  void Apply(StepPlan& plan);
  // Forgets sentences with no rows left.
  void Forget(const std::vector<int64_t>& handles);
  // After a step that gave alignments: row_positions for the rows of
  // aligned sentences, the source position each attended to most.
  void ReadAlignment();

  TransformerImpl& model;
  const DecodingOptions options;
  const double length_penalty;
  const torch::Device device;
  DecoderState state;  // Empty (no layers) while no sentence is active.
  std::unique_ptr<StepGraphs> graphs;  // Null off CUDA or when turned off.
  std::vector<Row> rows;
  // By handle; Row::sentence points into it (stable across rehashing).
  std::unordered_map<int64_t, Sentence> sentences;
  int64_t beam_sentences = 0;     // Sentences with a search.
  int64_t aligned_sentences = 0;  // Sentences that align.
  // Per row, after a step that gave alignments (ReadAlignment).
  std::vector<int32_t> row_positions;
  int64_t next_handle = 0;
};

void ContinuousDecoder::Impl::ReadAlignment() {
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

void ContinuousDecoder::Impl::HoldBackEnds(torch::Tensor& logits) const {
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

std::vector<double> ContinuousDecoder::Impl::BanRepeatedNgrams(
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

bool ContinuousDecoder::Impl::PlanForced(StepPlan& plan) {
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

void ContinuousDecoder::Impl::PlanGreedy(
    const torch::Tensor& logits, const std::vector<int64_t>& greedy_rows,
    const std::vector<double>& shifts, StepPlan& plan,
    std::vector<Finished>& finished) {
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
      Finished done{sentence.handle, std::move(sentence.target)};
      done.log_probability = sentence.log_probability;
      done.scored_tokens =
          static_cast<int64_t>(done.target_ids.size()) + (ended ? 1 : 0);
      done.source_positions = std::move(sentence.positions);
      finished.push_back(Forced(sentence, std::move(done)));
      plan.leaving[row] = 1;
    }
  }
}

void ContinuousDecoder::Impl::PlanBeams(const torch::Tensor& logits,
                                        const std::vector<Sentence*>& group,
                                        int64_t beam, int64_t beam_rows,
                                        const std::vector<double>& shifts,
                                        StepPlan& plan,
                                        std::vector<Finished>& finished) {
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
      std::vector<Hypothesis> best =
          sentence.search->Best(1 + sentence.alternatives);
      Finished done{sentence.handle, std::move(best.front().ids)};
      done.log_probability = best.front().log_probability;
      done.scored_tokens = best.front().scored_tokens;
      done.source_positions = std::move(best.front().source_positions);
      for (std::size_t k = 1; k < best.size(); ++k) {
        done.alternatives.push_back(std::move(best[k].ids));
        if (sentence.align) {
          done.alternative_positions.push_back(
              std::move(best[k].source_positions));
        }
      }
      finished.push_back(Forced(sentence, std::move(done)));
      for (int64_t row : sentence.rows) plan.leaving[row] = 1;
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

void ContinuousDecoder::Impl::Apply(StepPlan& plan) {
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
    state = DecoderState();
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

void ContinuousDecoder::Impl::Forget(const std::vector<int64_t>& handles) {
  for (int64_t handle : handles) {
    auto it = sentences.find(handle);
    if (it == sentences.end()) continue;
    if (it->second.search.has_value()) --beam_sentences;
    if (it->second.align) --aligned_sentences;
    sentences.erase(it);
  }
}

ContinuousDecoder::ContinuousDecoder(TransformerImpl& model,
                                     const DecodingOptions& options,
                                     double length_penalty)
    : impl_(std::make_unique<Impl>(model, options, length_penalty)) {
  if (length_penalty < 0) {
    throw std::invalid_argument("length_penalty must not be negative");
  }
}

ContinuousDecoder::~ContinuousDecoder() = default;

std::vector<int64_t> ContinuousDecoder::Add(
    const std::vector<EncodedSource>& sources) {
  std::vector<int64_t> handles;
  if (sources.empty()) return handles;
  std::vector<std::vector<int64_t>> source_ids;
  for (const EncodedSource& source : sources) {
    if (source.beam_size < 1) {
      throw std::invalid_argument("beam_size must be at least 1, got " +
                                  std::to_string(source.beam_size));
    }
    source_ids.push_back(source.ids);
  }
  c10::InferenceMode inference;
  // [new, src_len] and [new, 1, 1, src_len]
  torch::Tensor source_tensor =
      MakeSourceTensor(source_ids, impl_->model.config(), impl_->device);
  torch::Tensor source_mask = PaddingMask(source_tensor);
  torch::Tensor memory = impl_->model.Encode(source_tensor, source_mask);
  // One row per sentence: a beam search's first step decodes once.
  DecoderState added = impl_->model.StartDecoding(memory, source_mask);

  // Everything that can fail happens before the batch changes, or is undone.
  const int64_t first_row = static_cast<int64_t>(impl_->rows.size());
  impl_->rows.reserve(first_row + sources.size());
  std::vector<Sentence*> added_sentences;
  try {
    int64_t row = first_row;
    for (const EncodedSource& source : sources) {
      const int64_t handle =
          impl_->next_handle + static_cast<int64_t>(handles.size());
      Sentence& sentence = impl_->sentences[handle];
      handles.push_back(handle);
      sentence.handle = handle;
      sentence.limit = MaxTargetLength(impl_->options, source.ids.size());
      sentence.beam = source.beam_size;
      sentence.no_repeat_ngram = source.no_repeat_ngram;
      sentence.align = source.align;
      sentence.source_length = static_cast<int64_t>(source.ids.size());
      sentence.forced.assign(
          source.target_prefix.begin(),
          source.target_prefix.begin() +
              std::min<int64_t>(
                  static_cast<int64_t>(source.target_prefix.size()),
                  std::max<int64_t>(sentence.limit - 1, 0)));
      if (source.beam_size > 1) {
        sentence.search.emplace(
            source.beam_size, sentence.limit, impl_->length_penalty,
            impl_->options.beam_stops_early,
            impl_->options.length_normalization, sentence.forced);
        sentence.alternatives =
            std::clamp(source.alternatives, 0, source.beam_size - 1);
      }
      sentence.rows.push_back(row++);
      added_sentences.push_back(&sentence);
    }
    impl_->state.Append(added);
  } catch (...) {
    for (int64_t handle : handles) impl_->sentences.erase(handle);
    throw;
  }
  // From here on nothing throws: rows has room for every new row.
  impl_->next_handle += static_cast<int64_t>(handles.size());
  for (Sentence* sentence : added_sentences) {
    if (sentence->search.has_value()) ++impl_->beam_sentences;
    if (sentence->align) ++impl_->aligned_sentences;
    impl_->rows.push_back({sentence, 0, Vocabulary::kBosId});
  }
  return handles;
}

std::vector<ContinuousDecoder::Finished> ContinuousDecoder::Step() {
  std::vector<Finished> finished;
  std::vector<Row>& rows = impl_->rows;
  if (rows.empty()) return finished;
  c10::InferenceMode inference;
  std::vector<int64_t> last_tokens;
  last_tokens.reserve(rows.size());
  for (const Row& row : rows) last_tokens.push_back(row.last_token);
  // [rows, vocab]
  impl_->state.wants_alignment = impl_->aligned_sentences > 0;
  torch::Tensor logits = impl_->model.DecodeStep(
      at::tensor(last_tokens, at::kLong).to(impl_->device), &impl_->state,
      impl_->graphs.get());
  impl_->ReadAlignment();

  impl_->HoldBackEnds(logits);
  const std::vector<double> shifts = impl_->BanRepeatedNgrams(logits);
  StepPlan plan(rows.size());
  const bool forcing = impl_->PlanForced(plan);
  std::vector<int64_t> greedy_rows;
  // Beam groups by beam size and rows per sentence (the beam, or 1 at a
  // first step), each searched in one pass.
  std::map<std::pair<int64_t, int64_t>, std::vector<Sentence*>> groups;
  if (impl_->beam_sentences == 0 && !forcing) {
    greedy_rows = plan.order;  // Every row.
  } else {
    for (size_t i = 0; i < rows.size(); ++i) {
      Sentence* sentence = rows[i].sentence;
      if (plan.forced[i]) continue;
      if (!sentence->search.has_value()) {
        greedy_rows.push_back(static_cast<int64_t>(i));
      } else if (rows[i].beam == 0) {
        groups[{sentence->beam, static_cast<int64_t>(sentence->rows.size())}]
            .push_back(sentence);
      }
    }
  }
  impl_->PlanGreedy(logits, greedy_rows, shifts, plan, finished);
  for (const auto& [shape, group] : groups) {
    impl_->PlanBeams(logits, group, shape.first, shape.second, shifts, plan,
                     finished);
  }
  impl_->Apply(plan);
  std::vector<int64_t> ended;
  for (const Finished& sentence : finished) ended.push_back(sentence.handle);
  impl_->Forget(ended);
  return finished;
}

void ContinuousDecoder::Remove(const std::vector<int64_t>& handles) {
  const std::unordered_set<int64_t> dropped(handles.begin(), handles.end());
  StepPlan plan(impl_->rows.size());
  bool any = false;
  for (size_t i = 0; i < impl_->rows.size(); ++i) {
    Row& row = impl_->rows[i];
    plan.next_token[i] = row.last_token;
    if (dropped.count(row.sentence->handle)) {
      plan.leaving[i] = 1;
      any = true;
    }
  }
  if (!any) return;
  c10::InferenceMode inference;
  impl_->Apply(plan);
  impl_->Forget(handles);
}

void ContinuousDecoder::Clear() {
  impl_->rows.clear();
  impl_->sentences.clear();
  impl_->beam_sentences = 0;
  impl_->aligned_sentences = 0;
  impl_->state = DecoderState();
}

std::vector<ContinuousDecoder::Finished> ContinuousDecoder::DecodeAll(
    const std::vector<EncodedSource>& sources) {
  if (!impl_->rows.empty()) {
    throw std::logic_error("DecodeAll needs a decoder with nothing in flight");
  }
  std::vector<Finished> translations(sources.size());
  const std::vector<int64_t> handles = Add(sources);
  const int64_t first = handles.empty() ? 0 : handles.front();
  while (!impl_->rows.empty()) {
    for (Finished& sentence : Step()) {
      const int64_t index = sentence.handle - first;
      translations[index] = std::move(sentence);
      translations[index].handle = index;
    }
  }
  return translations;
}

int64_t ContinuousDecoder::active() const {
  return static_cast<int64_t>(impl_->sentences.size());
}

int64_t ContinuousDecoder::rows() const {
  return static_cast<int64_t>(impl_->rows.size());
}

const StepGraphs* ContinuousDecoder::graphs() const {
  return impl_->graphs.get();
}

std::vector<std::vector<int64_t>> TargetIds(
    std::vector<ContinuousDecoder::Finished> translations) {
  std::vector<std::vector<int64_t>> ids;
  ids.reserve(translations.size());
  for (ContinuousDecoder::Finished& translation : translations) {
    ids.push_back(std::move(translation.target_ids));
  }
  return ids;
}

}  // namespace fanyi
