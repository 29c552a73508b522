#include "server/text_job.h"

#include <atomic>
#include <cstddef>
#include <exception>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace fanyi {
namespace {

// One job's texts while their parts (sentences, clauses) decode: shared by
// the parts' completions; the last one posts the assembly.
struct JobState {
  explicit JobState(TextJob text_job) : job(std::move(text_job)) {
    for (const PreparedText& text : job.texts) {
      parts.emplace_back(text.parts.size());
      verdicts.emplace_back(text.parts.size());
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
  // Guarded by mutex: each part's translation, [text][part]; while a
  // broken one is decoded again, its first.
  std::vector<std::vector<DecodedPart>> parts;
  // Guarded by mutex: what the OutputGuard found of each part.
  std::vector<std::vector<GuardVerdict>> verdicts;
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
          pipeline.assembler().Assemble(state.job.texts[t], state.parts[t]));
      for (const GuardVerdict& verdict : state.verdicts[t]) {
        CountVerdict(verdict, &translations.back());
      }
      translations.back().alternatives =
          pipeline.assembler().AssembleAlternatives(
              state.job.texts[t], state.parts[t], translations.back().text);
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
      model.metrics().ObserveText(translation);
    }
    for (const std::vector<GuardVerdict>& text : state.verdicts) {
      for (const GuardVerdict& verdict : text) {
        model.metrics().ObserveGuard(verdict);
      }
    }
  }
  state.job.done(status, std::move(translations));
}

void PartDone(AssemblyPool& assembly, const std::shared_ptr<JobState>& state,
              std::size_t text, std::size_t part, bool retry,
              const grpc::Status& decode_status, DecodedPart target);

// A queued part of the job: text `text`'s part `part`, as `source` (the
// part itself, or its retry).
PendingRequest PartRequest(AssemblyPool& assembly,
                           const std::shared_ptr<JobState>& state,
                           std::size_t text, std::size_t part, bool retry,
                           EncodedSource source) {
  PendingRequest request;
  request.source = std::move(source);
  request.deadline = state->job.deadline;
  request.cancelled = [state] {
    return state->failed.load() ||
           (state->job.cancelled && state->job.cancelled());
  };
  request.done = [&assembly, state, text, part, retry](
                     const grpc::Status& decode_status, DecodedPart target) {
    PartDone(assembly, state, text, part, retry, decode_status,
             std::move(target));
  };
  return request;
}

// When the model's OutputGuard finds `target`, the first translation of a
// part, broken: records it and, with the guard on, queues the part's retry
// and returns true (the retry completes the part). Runs on a decode thread.
// The first translation stands when the job has failed or been given up,
// when the retry would decode as before, when the queue refuses it (full,
// stopping, a beam wider than a batch), and when anything here throws.
bool RetriedWhenBroken(AssemblyPool& assembly,
                       const std::shared_ptr<JobState>& state, std::size_t text,
                       std::size_t part, const DecodedPart& target) {
  try {
    const TextPipeline& pipeline = state->job.model->translator().pipeline();
    const EncodedSource& source = state->job.texts[text].parts[part];
    const BrokenOutput broken = pipeline.guard().Inspect(source, target);
    if (broken == BrokenOutput::kNone) return false;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      state->verdicts[text][part].broken = broken;
    }
    if (!pipeline.guard().enabled() || state->failed.load() ||
        (state->job.cancelled && state->job.cancelled())) {
      return false;
    }
    std::optional<EncodedSource> again = OutputGuard::Retry(
        source, broken, pipeline.limits().text_limits().max_beam_size);
    if (!again) return false;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      state->parts[text][part] = target;
    }
    std::vector<PendingRequest> retry;
    retry.push_back(
        PartRequest(assembly, state, text, part, true, std::move(*again)));
    return state->job.model->batcher().SubmitAll(retry).ok();
  } catch (const std::exception& e) {
    std::cerr << "fanyi: output guard: " << e.what() << "\n";
    return false;
  }
}

// Whether to keep `retry`, the second translation of a part, over its
// first (held in `state`, whose mutex the caller holds); not when the
// check throws.
bool KeepsRetry(const JobState& state, std::size_t text, std::size_t part,
                const DecodedPart& retry) {
  try {
    return state.job.model->translator().pipeline().guard().KeepsRetry(
        state.job.texts[text].parts[part], state.parts[text][part], retry);
  } catch (const std::exception& e) {
    std::cerr << "fanyi: output guard: " << e.what() << "\n";
    return false;
  }
}

// Records one part's result (its retry's, with `retry`); the last part of
// the job posts its assembly.
void PartDone(AssemblyPool& assembly, const std::shared_ptr<JobState>& state,
              std::size_t text, std::size_t part, bool retry,
              const grpc::Status& decode_status, DecodedPart target) {
  if (!retry && decode_status.ok() &&
      RetriedWhenBroken(assembly, state, text, part, target)) {
    return;
  }
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (retry) {
      // A retry that failed leaves the first translation; one that did not
      // replaces it when the guard prefers it.
      if (decode_status.ok() && KeepsRetry(*state, text, part, target)) {
        state->parts[text][part] = std::move(target);
        state->verdicts[text][part].kept_retry = true;
      }
    } else {
      // The first failure is the cause; the CANCELLED of the siblings it
      // stopped is not.
      if (!decode_status.ok() && !state->failed.exchange(true)) {
        state->first_error = state->Named(decode_status, text);
      }
      state->parts[text][part] = std::move(target);
    }
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
      requests.push_back(
          PartRequest(assembly, state, t, part, false, text.parts[part]));
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
