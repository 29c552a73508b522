#include "server/pivot_job.h"

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// The call between its legs: the first leg's translations, and where each
// text went in the second.
struct PivotState {
  PivotJob job;  // Its first leg's model and texts moved to that leg.
  std::vector<TextTranslation> first;
  // Per text: its index among the second leg's texts, or -1 when its first
  // translation is blank (nothing to translate again).
  std::vector<int> second_index;
  std::vector<std::string> second_texts;  // Viewed by the second request.
};

// Answers the call with each text's two translations merged.
void FinishPivot(PivotState& state,
                 std::vector<TextTranslation> second_translations) {
  std::vector<TextTranslation> translations;
  for (std::size_t t = 0; t < state.first.size(); ++t) {
    const int second = state.second_index[t];
    translations.push_back(
        second < 0
            ? std::move(state.first[t])
            : PivotedTranslation(
                  std::move(state.first[t]),
                  std::move(
                      second_translations[static_cast<std::size_t>(second)])));
  }
  state.job.first.done(grpc::Status::OK, std::move(translations));
}

// On the assembly pool, when the first leg has translated: prepares and
// submits the second, or answers the call with what stops it.
void StartSecondLeg(const std::shared_ptr<PivotState>& state,
                    AssemblyPool& assembly,
                    std::vector<TextTranslation> first) {
  state->first = std::move(first);
  TextRequest request = state->job.request;
  request.texts.clear();
  std::vector<std::size_t> indices;
  for (std::size_t t = 0; t < state->first.size(); ++t) {
    if (IsBlank(state->first[t].text)) {
      state->second_index.push_back(-1);
      continue;
    }
    state->second_index.push_back(static_cast<int>(state->second_texts.size()));
    state->second_texts.push_back(state->first[t].text);
    indices.push_back(request.indices.empty() ? t : request.indices[t]);
  }
  for (const std::string& text : state->second_texts) {
    request.texts.push_back(text);
  }
  request.indices = std::move(indices);
  if (request.texts.empty()) return FinishPivot(*state, {});

  const TextJob& first_job = state->job.first;
  TextJob second;
  second.model = state->job.second;
  second.deadline = first_job.deadline;
  second.cancelled = first_job.cancelled;
  second.name_texts = first_job.name_texts;
  try {
    second.texts = second.model->translator().pipeline().Prepare(request);
  } catch (const std::invalid_argument& e) {
    return first_job.done(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                     std::string("translated into ") + kPivotLanguage +
                         " (the pivot), " + e.what()),
        {});
  } catch (const std::exception& e) {
    return first_job.done(
        grpc::Status(grpc::StatusCode::INTERNAL,
                     std::string("preparing the translation into ") +
                         kPivotLanguage + " failed: " + e.what()),
        {});
  }
  second.done = [state](const grpc::Status& status,
                        std::vector<TextTranslation> translations) {
    if (!status.ok()) return state->job.first.done(status, {});
    FinishPivot(*state, std::move(translations));
  };
  if (grpc::Status status = SubmitTextJob(assembly, std::move(second));
      !status.ok()) {
    state->job.first.done(status, {});
  }
}

}  // namespace

TextRequest PivotFirstLeg(const TextRequest& request) {
  TextRequest first = request;
  first.alternatives = 0;
  first.script.reset();
  for (const GlossaryEntry& entry : request.glossary) {
    first.do_not_translate.push_back(entry.source);
  }
  first.glossary.clear();
  return first;
}

TextTranslation PivotedTranslation(TextTranslation first,
                                   TextTranslation second) {
  TextTranslation pivoted = std::move(second);
  pivoted.confidence *= first.confidence;
  pivoted.sentence_count = first.sentence_count;
  pivoted.split_sentence_count = first.split_sentence_count;
  pivoted.unknown_words = std::move(first.unknown_words);
  pivoted.span_count = first.span_count;
  pivoted.source_token_count = first.source_token_count;
  pivoted.capped_part_count += first.capped_part_count;
  pivoted.unplaced_span_count += first.unplaced_span_count;
  pivoted.dropped_unknown_count += first.dropped_unknown_count;
  pivoted.broken_part_count += first.broken_part_count;
  pivoted.repaired_part_count += first.repaired_part_count;
  return pivoted;
}

grpc::Status SubmitPivotJob(AssemblyPool& assembly, PivotJob job) {
  auto state = std::make_shared<PivotState>();
  state->job = std::move(job);
  state->job.request.texts.clear();  // Views into the caller's request.
  TextJob first;
  first.model = std::move(state->job.first.model);
  first.texts = std::move(state->job.first.texts);
  first.deadline = state->job.first.deadline;
  first.cancelled = state->job.first.cancelled;
  first.name_texts = state->job.first.name_texts;
  first.done = [state, &assembly](const grpc::Status& status,
                                  std::vector<TextTranslation> translations) {
    if (!status.ok()) return state->job.first.done(status, {});
    StartSecondLeg(state, assembly, std::move(translations));
  };
  return SubmitTextJob(assembly, std::move(first));
}

std::vector<PreparedText> PrepareRoute(const ModelRoute& route,
                                       const TextRequest& request) {
  if (route.size() == 1) {
    return route.front()->translator().pipeline().Prepare(request);
  }
  route.back()->translator().pipeline().CheckRequestOptions(request);
  return route.front()->translator().pipeline().Prepare(PivotFirstLeg(request));
}

grpc::Status SubmitRoute(AssemblyPool& assembly, const ModelRoute& route,
                         TextJob job, const TextRequest& request) {
  job.model = route.front();
  if (route.size() == 1) return SubmitTextJob(assembly, std::move(job));
  return SubmitPivotJob(assembly, {std::move(job), route.back(), request});
}

}  // namespace fanyi
