#include "server/text_job.h"

#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <string>
#include <utility>

namespace fanyi {
namespace {

// One job's texts while their parts (sentences, clauses) decode: shared by
// the parts' completions; the last one posts the assembly.
struct JobState {
  explicit JobState(TextJob text_job) : job(std::move(text_job)) {
    for (const PreparedText& text : job.texts) {
      targets.emplace_back(text.parts.size());
      alternatives.emplace_back(text.parts.size());
      remaining += static_cast<int>(text.parts.size());
    }
  }

  // `status` with the name of text `index` when the job names its texts.
  grpc::Status Named(const grpc::Status& status, std::size_t index) const {
    if (!job.name_texts) return status;
    return grpc::Status(
        status.error_code(),
        "texts[" + std::to_string(index) + "]: " + status.error_message());
  }

  const TextJob job;
  // Set by the first part that fails; the other parts then count as
  // cancelled and leave the decoder at the next step.
  std::atomic<bool> failed{false};
  std::mutex mutex;
  // Guarded by mutex: each part's target ids, [text][part].
  std::vector<std::vector<std::vector<int64_t>>> targets;
  // Guarded by mutex: each part's next-best target ids, [text][part][k].
  std::vector<std::vector<std::vector<std::vector<int64_t>>>> alternatives;
  int remaining = 0;         // Guarded by mutex: parts not yet completed.
  grpc::Status first_error;  // Guarded by mutex: the failure that came first.
};

// On the assembly pool, once every part is done: assembles every text and
// answers the job.
void FinishJob(JobState& state) {
  ServedModel& model = *state.job.model;
  std::vector<TextTranslation> translations;
  grpc::Status status = state.first_error;
  for (std::size_t t = 0; t < state.job.texts.size() && status.ok(); ++t) {
    try {
      const TextPipeline& pipeline = model.translator().pipeline();
      translations.push_back(
          pipeline.assembler().Assemble(state.job.texts[t], state.targets[t]));
      translations.back().alternatives =
          pipeline.assembler().AssembleAlternatives(
              state.job.texts[t], state.targets[t], state.alternatives[t],
              translations.back().text);
    } catch (const std::exception& e) {
      status = state.Named(
          grpc::Status(
              grpc::StatusCode::INTERNAL,
              std::string("assembling the translation failed: ") + e.what()),
          t);
    }
  }
  if (!status.ok()) {
    translations.clear();
  } else {
    for (const TextTranslation& translation : translations) {
      model.metrics().ObserveText(
          translation.sentence_count,
          static_cast<int>(translation.unknown_words.size()),
          translation.unplaced_span_count, translation.capped_part_count,
          translation.dropped_unknown_count);
    }
  }
  state.job.done(status, std::move(translations));
}

// Records one part's result; the last part of the job posts its assembly.
void PartDone(AssemblyPool& assembly, const std::shared_ptr<JobState>& state,
              std::size_t text, std::size_t part,
              const grpc::Status& decode_status, DecodedTarget target) {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    // The first failure is the cause; the CANCELLED of the siblings it
    // stopped is not.
    if (!decode_status.ok() && !state->failed.exchange(true)) {
      state->first_error = state->Named(decode_status, text);
    }
    state->targets[text][part] = std::move(target.ids);
    state->alternatives[text][part] = std::move(target.alternatives);
    if (--state->remaining > 0) return;
  }
  // The last part: every other completion has run, so the state is the
  // pool's. Assembly leaves the decode thread, whose rows go on stepping.
  assembly.Post([state] { FinishJob(*state); });
}

}  // namespace

grpc::Status SubmitTextJob(AssemblyPool& assembly, TextJob job) {
  auto state = std::make_shared<JobState>(std::move(job));
  std::vector<PendingRequest> requests;
  for (std::size_t t = 0; t < state->job.texts.size(); ++t) {
    const PreparedText& text = state->job.texts[t];
    for (std::size_t part = 0; part < text.parts.size(); ++part) {
      PendingRequest request;
      request.source = text.parts[part];
      request.deadline = state->job.deadline;
      request.cancelled = [state] {
        return state->failed.load() ||
               (state->job.cancelled && state->job.cancelled());
      };
      request.done = [&assembly, state, t, part](
                         const grpc::Status& decode_status,
                         DecodedTarget target) {
        PartDone(assembly, state, t, part, decode_status, std::move(target));
      };
      requests.push_back(std::move(request));
    }
  }
  // Texts with nothing to translate (an HTML document of tags only) have no
  // parts: with none at all, the job is assembled at once.
  if (requests.empty()) {
    assembly.Post([state] { FinishJob(*state); });
    return grpc::Status::OK;
  }
  // Every part is queued or none: a full queue refuses the whole call
  // before anything decodes.
  return state->job.model->batcher().SubmitAll(requests);
}

}  // namespace fanyi
