#include "server/translation_service.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace fanyi {
namespace {

constexpr char kTranslateMethod[] = "Translate";
constexpr char kTranslateBatchMethod[] = "TranslateBatch";

// Completes one RPC exactly once: records its metrics, then finishes the
// reactor. Metrics are recorded first so that a client that has its answer
// also sees it counted.
class RpcCompletion {
 public:
  RpcCompletion(const char* method, grpc::ServerUnaryReactor* reactor,
                ServerMetrics& metrics)
      : method_(method),
        reactor_(reactor),
        metrics_(metrics),
        start_(std::chrono::steady_clock::now()) {
    metrics_.RequestStarted();
  }

  void Finish(const grpc::Status& status) const {
    metrics_.RecordRequest(
        method_, status.error_code(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
            .count());
    metrics_.RequestFinished();
    reactor_->Finish(status);
  }

 private:
  const char* const method_;
  grpc::ServerUnaryReactor* const reactor_;
  ServerMetrics& metrics_;
  const std::chrono::steady_clock::time_point start_;
};

// True when the client's deadline has already passed.
bool DeadlinePassed(const grpc::CallbackServerContext& context) {
  return context.deadline() <= std::chrono::system_clock::now();
}

// Lets the batcher drop the rows of an RPC the client has cancelled. The
// context outlives the request's rows: the RPC is finished only after the
// batcher has answered each of them.
RequestBatcher::CancelledPredicate CancellationOf(
    grpc::CallbackServerContext* context) {
  return [context] { return context->IsCancelled(); };
}

grpc::Status DeadlineStatus() {
  return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                      "deadline passed before the request was queued");
}

// Shared by the per-text completions of one TranslateBatch RPC.
struct BatchCallState {
  BatchCallState(RpcCompletion rpc_completion, int texts)
      : completion(rpc_completion), remaining(texts) {}

  const RpcCompletion completion;
  // Set by the first text that fails; its siblings then count as cancelled
  // and leave the decoder at the next step.
  std::atomic<bool> failed{false};
  std::mutex mutex;
  int remaining;             // Guarded by mutex: texts not yet completed.
  grpc::Status first_error;  // Guarded by mutex: the failure that came first.
};

}  // namespace

TranslationService::TranslationService(const ServiceOptions& options,
                                       const Translator& translator,
                                       RequestBatcher& batcher,
                                       ServerMetrics& metrics)
    : validator_(options, translator),
      translator_(translator),
      batcher_(batcher),
      metrics_(metrics) {}

grpc::ServerUnaryReactor* TranslationService::Translate(
    grpc::CallbackServerContext* context, const v1::TranslateRequest* request,
    v1::TranslateResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const RpcCompletion completion(kTranslateMethod, reactor, metrics_);
  if (DeadlinePassed(*context)) {
    completion.Finish(DeadlineStatus());
    return reactor;
  }
  EncodedSource source;
  if (grpc::Status status = validator_.Validate(*request, &source);
      !status.ok()) {
    completion.Finish(status);
    return reactor;
  }
  const int beam_size = source.beam_size;
  const int source_token_count = static_cast<int>(source.ids.size());
  batcher_.Submit(
      std::move(source), context->deadline(), CancellationOf(context),
      [this, completion, response, source_token_count, beam_size](
          const grpc::Status& decode_status, std::vector<int64_t> target_ids) {
        if (!decode_status.ok()) {
          completion.Finish(decode_status);
          return;
        }
        response->set_model_version(translator_.model_version());
        response->set_beam_size(beam_size);
        completion.Finish(FillTranslation(target_ids, source_token_count,
                                          response->mutable_translation()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::TranslateBatch(
    grpc::CallbackServerContext* context,
    const v1::TranslateBatchRequest* request,
    v1::TranslateBatchResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const RpcCompletion completion(kTranslateBatchMethod, reactor, metrics_);
  // A malformed text count is reported before a passed deadline.
  if (grpc::Status status = validator_.CheckTextCount(request->texts_size());
      !status.ok()) {
    completion.Finish(status);
    return reactor;
  }
  if (DeadlinePassed(*context)) {
    completion.Finish(DeadlineStatus());
    return reactor;
  }
  // Validate everything first so a bad text costs no decoding.
  std::vector<EncodedSource> sources;
  if (grpc::Status status = validator_.Validate(*request, &sources);
      !status.ok()) {
    completion.Finish(status);
    return reactor;
  }

  const int text_count = static_cast<int>(sources.size());
  const int beam_size = sources.front().beam_size;
  response->set_model_version(translator_.model_version());
  response->set_beam_size(beam_size);
  // Pre-sized so each completion writes only its own element.
  for (int i = 0; i < text_count; ++i) response->add_translations();
  auto state = std::make_shared<BatchCallState>(completion, text_count);
  std::vector<PendingRequest> requests(text_count);
  for (int i = 0; i < text_count; ++i) {
    const int source_token_count = static_cast<int>(sources[i].ids.size());
    requests[i].source = std::move(sources[i]);
    requests[i].deadline = context->deadline();
    requests[i].cancelled = [context, state] {
      return state->failed.load() || context->IsCancelled();
    };
    requests[i].done = [this, state, response, i, source_token_count](
                           const grpc::Status& decode_status,
                           std::vector<int64_t> target_ids) {
      grpc::Status status = decode_status;
      if (status.ok()) {
        status = FillTranslation(target_ids, source_token_count,
                                 response->mutable_translations(i));
      }
      std::unique_lock<std::mutex> lock(state->mutex);
      // The first failure is the cause; the CANCELLED of the siblings it
      // stopped is not.
      if (!status.ok() && !state->failed.exchange(true)) {
        state->first_error = grpc::Status(
            status.error_code(),
            "texts[" + std::to_string(i) + "]: " + status.error_message());
      }
      if (--state->remaining > 0) return;
      const grpc::Status final_status = state->first_error;
      lock.unlock();
      state->completion.Finish(final_status);
    };
  }
  // All texts are queued or none is: a full queue refuses the whole batch
  // before anything decodes.
  if (grpc::Status status = batcher_.SubmitAll(requests); !status.ok()) {
    completion.Finish(status);
  }
  return reactor;
}

grpc::Status TranslationService::FillTranslation(
    const std::vector<int64_t>& target_ids, int source_token_count,
    v1::Translation* translation) const {
  try {
    translation->set_text(translator_.DecodeTarget(target_ids));
  } catch (const std::exception& e) {
    return grpc::Status(
        grpc::StatusCode::INTERNAL,
        std::string("detokenizing the translation failed: ") + e.what());
  }
  translation->set_source_token_count(source_token_count);
  translation->set_generated_token_count(static_cast<int>(target_ids.size()));
  return grpc::Status::OK;
}

}  // namespace fanyi
