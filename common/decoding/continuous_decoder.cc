#include "common/decoding/continuous_decoder.h"

#include <ATen/ops/tensor.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <utility>

#include "common/decoding/continuous_batch.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/transformer.h"
#include "common/text/vocabulary.h"

namespace fanyi {

ContinuousDecoder::ContinuousDecoder(TransformerImpl& model,
                                     const DecodingOptions& options,
                                     double length_penalty)
    : batch_(
          std::make_unique<ContinuousBatch>(model, options, length_penalty)) {
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
      MakeSourceTensor(source_ids, batch_->model.config(), batch_->device);
  torch::Tensor source_mask = PaddingMask(source_tensor);
  torch::Tensor memory = batch_->model.Encode(source_tensor, source_mask);
  // One row per sentence: a beam search's first step decodes once.
  DecoderState added = batch_->model.StartDecoding(memory, source_mask);

  // Everything that can fail happens before the batch changes, or is undone.
  const int64_t first_row = static_cast<int64_t>(batch_->rows.size());
  batch_->rows.reserve(first_row + sources.size());
  std::vector<ContinuousBatch::Sentence*> added_sentences;
  try {
    int64_t row = first_row;
    for (const EncodedSource& source : sources) {
      const int64_t handle =
          batch_->next_handle + static_cast<int64_t>(handles.size());
      ContinuousBatch::Sentence& sentence = batch_->sentences[handle];
      handles.push_back(handle);
      sentence.handle = handle;
      sentence.limit = MaxTargetLength(batch_->options, source.ids.size());
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
            source.beam_size, sentence.limit, batch_->length_penalty,
            batch_->options.beam_stops_early,
            batch_->options.length_normalization, sentence.forced);
        sentence.alternatives =
            std::clamp(source.alternatives, 0, source.beam_size - 1);
      }
      sentence.rows.push_back(row++);
      added_sentences.push_back(&sentence);
    }
    batch_->state.Append(added);
  } catch (...) {
    for (int64_t handle : handles) batch_->sentences.erase(handle);
    throw;
  }
  // From here on nothing throws: rows has room for every new row.
  batch_->next_handle += static_cast<int64_t>(handles.size());
  for (ContinuousBatch::Sentence* sentence : added_sentences) {
    if (sentence->search.has_value()) ++batch_->beam_sentences;
    if (sentence->align) ++batch_->aligned_sentences;
    batch_->rows.push_back({sentence, 0, Vocabulary::kBosId});
  }
  return handles;
}

std::vector<ContinuousDecoder::Finished> ContinuousDecoder::Step() {
  std::vector<Finished> finished;
  std::vector<ContinuousBatch::Row>& rows = batch_->rows;
  if (rows.empty()) return finished;
  c10::InferenceMode inference;
  // A window of steps on the device, when every row can take one.
  const int64_t beam =
      batch_->options.device_steps > 0 ? batch_->BeamOnly() : 0;
  if (beam > 0 || (batch_->options.device_steps > 0 && batch_->GreedyOnly())) {
    if (beam > 0) {
      batch_->StepBeamWindow(beam, finished);
    } else {
      batch_->StepGreedyWindow(finished);
    }
    std::vector<int64_t> ended;
    for (const Finished& sentence : finished) ended.push_back(sentence.handle);
    batch_->Forget(ended);
    return finished;
  }
  std::vector<int64_t> last_tokens;
  last_tokens.reserve(rows.size());
  for (const ContinuousBatch::Row& row : rows)
    last_tokens.push_back(row.last_token);
  // [rows, vocab]
  batch_->state.wants_alignment = batch_->aligned_sentences > 0;
  torch::Tensor logits = batch_->model.DecodeStep(
      at::tensor(last_tokens, at::kLong).to(batch_->device), &batch_->state,
      batch_->graphs.get());
  batch_->ReadAlignment();

  batch_->HoldBackEnds(logits);
  const std::vector<double> shifts = batch_->BanRepeatedNgrams(logits);
  ContinuousBatch::StepPlan plan(rows.size());
  const bool forcing = batch_->PlanForced(plan);
  std::vector<int64_t> greedy_rows;
  // Beam groups by beam size and rows per sentence (the beam, or 1 at a
  // first step), each searched in one pass.
  std::map<std::pair<int64_t, int64_t>, std::vector<ContinuousBatch::Sentence*>>
      groups;
  if (batch_->beam_sentences == 0 && !forcing) {
    greedy_rows = plan.order;  // Every row.
  } else {
    for (size_t i = 0; i < rows.size(); ++i) {
      ContinuousBatch::Sentence* sentence = rows[i].sentence;
      if (plan.forced[i]) continue;
      if (!sentence->search.has_value()) {
        greedy_rows.push_back(static_cast<int64_t>(i));
      } else if (rows[i].beam == 0) {
        groups[{sentence->beam, static_cast<int64_t>(sentence->rows.size())}]
            .push_back(sentence);
      }
    }
  }
  batch_->PlanGreedy(logits, greedy_rows, shifts, plan, finished);
  for (const auto& [shape, group] : groups) {
    batch_->PlanBeams(logits, group, shape.first, shape.second, shifts, plan,
                      finished);
  }
  batch_->Apply(plan);
  std::vector<int64_t> ended;
  for (const Finished& sentence : finished) ended.push_back(sentence.handle);
  batch_->Forget(ended);
  return finished;
}

void ContinuousDecoder::Remove(const std::vector<int64_t>& handles) {
  const std::unordered_set<int64_t> dropped(handles.begin(), handles.end());
  ContinuousBatch::StepPlan plan(batch_->rows.size());
  bool any = false;
  for (size_t i = 0; i < batch_->rows.size(); ++i) {
    ContinuousBatch::Row& row = batch_->rows[i];
    plan.next_token[i] = row.last_token;
    if (dropped.count(row.sentence->handle)) {
      plan.leaving[i] = 1;
      any = true;
    }
  }
  if (!any) return;
  c10::InferenceMode inference;
  batch_->Apply(plan);
  batch_->Forget(handles);
}

void ContinuousDecoder::Clear() {
  batch_->rows.clear();
  batch_->sentences.clear();
  batch_->beam_sentences = 0;
  batch_->aligned_sentences = 0;
  batch_->state = DecoderState();
}

std::vector<ContinuousDecoder::Finished> ContinuousDecoder::DecodeAll(
    const std::vector<EncodedSource>& sources) {
  if (!batch_->rows.empty()) {
    throw std::logic_error("DecodeAll needs a decoder with nothing in flight");
  }
  std::vector<Finished> translations(sources.size());
  const std::vector<int64_t> handles = Add(sources);
  const int64_t first = handles.empty() ? 0 : handles.front();
  while (!batch_->rows.empty()) {
    for (Finished& sentence : Step()) {
      const int64_t index = sentence.handle - first;
      translations[index] = std::move(sentence);
      translations[index].handle = index;
    }
  }
  return translations;
}

int64_t ContinuousDecoder::active() const {
  return static_cast<int64_t>(batch_->sentences.size());
}

int64_t ContinuousDecoder::rows() const {
  return static_cast<int64_t>(batch_->rows.size());
}

const StepGraphs* ContinuousDecoder::graphs() const {
  return batch_->graphs.get();
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
