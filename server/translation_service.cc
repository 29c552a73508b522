#include "server/translation_service.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "server/request_preparation.h"

namespace fanyi {
namespace {

constexpr char kTranslateMethod[] = "Translate";
constexpr char kTranslateBatchMethod[] = "TranslateBatch";
constexpr char kListModelsMethod[] = "ListModels";

// True when the client's deadline has already passed.
bool DeadlinePassed(const grpc::CallbackServerContext& context) {
  return context.deadline() <= std::chrono::system_clock::now();
}

grpc::Status DeadlineStatus() {
  return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                      "deadline passed before the request was queued");
}

// Fills what a Translate or TranslateBatch response says of the whole call:
// the model, and the beam size and script every text of it got.
template <typename Response>
void DescribeCall(const ServedModel& model, const PreparedText& text,
                  Response* response) {
  response->set_model_version(model.translator().model_version());
  response->mutable_model()->set_name(model.name());
  response->mutable_model()->set_version(model.version());
  response->set_beam_size(text.parts.front().beam_size);
  if (text.script) response->set_script(ScriptToProto(*text.script));
}

// What ListModels says of `model`.
void DescribeModel(const ServedModel& model, v1::ModelInfo* info) {
  const Translator& translator = model.translator();
  const TextPipeline& pipeline = translator.pipeline();
  info->mutable_model()->set_name(model.name());
  info->mutable_model()->set_version(model.version());
  info->set_source_language(translator.source_language());
  info->set_target_language(translator.target_language());
  info->set_model_version(translator.model_version());
  if (pipeline.writes_chinese()) {
    for (v1::Script script :
         {v1::SCRIPT_SIMPLIFIED, v1::SCRIPT_TRADITIONAL_TAIWAN,
          v1::SCRIPT_TRADITIONAL_HONG_KONG}) {
      info->add_scripts(script);
    }
  }
  info->set_source_vocabulary_size(translator.source_vocabulary_size());
  info->set_target_vocabulary_size(translator.target_vocabulary_size());
  info->set_cased_output(pipeline.keeps_target_case());
  info->set_device(translator.device_name());
  info->set_source_script_normalized(pipeline.normalizes_source_script());
}

}  // namespace

// Completes one RPC exactly once: records its metrics (under the model
// chosen, "" before one is), then finishes the reactor. Metrics are
// recorded first so that a client that has its answer also sees it counted.
class TranslationService::RpcCompletion {
 public:
  RpcCompletion(const char* method, grpc::ServerUnaryReactor* reactor,
                ServerMetrics& metrics)
      : method_(method),
        reactor_(reactor),
        metrics_(metrics),
        start_(std::chrono::steady_clock::now()) {
    metrics_.RequestStarted();
  }

  // The model the RPC chose, for its metrics.
  void set_model(const std::string& model) { model_ = model; }

  void Answer(const grpc::Status& status) const {
    metrics_.RecordRequest(
        model_, method_, status.error_code(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
            .count());
    metrics_.RequestFinished();
    reactor_->Finish(status);
  }

 private:
  const char* const method_;
  std::string model_;
  grpc::ServerUnaryReactor* const reactor_;
  ServerMetrics& metrics_;
  const std::chrono::steady_clock::time_point start_;
};

// One RPC's texts while their parts (sentences, clauses) decode: shared by
// the parts' completions; after the last one, the assembly pool assembles
// the translations and finishes the RPC.
struct TranslationService::CallState {
  CallState(RpcCompletion rpc_completion, std::shared_ptr<ServedModel> served,
            std::vector<PreparedText> prepared,
            std::vector<v1::Translation*> outputs, bool batch)
      : completion(std::move(rpc_completion)),
        model(std::move(served)),
        texts(std::move(prepared)),
        translations(std::move(outputs)),
        batch_call(batch) {
    for (const PreparedText& text : texts) {
      targets.emplace_back(text.parts.size());
      remaining += static_cast<int>(text.parts.size());
    }
  }

  const RpcCompletion completion;
  // Held until the RPC is answered: a version replaced meanwhile stays
  // loaded for it.
  const std::shared_ptr<ServedModel> model;
  const std::vector<PreparedText> texts;
  const std::vector<v1::Translation*> translations;  // One per text.
  const bool batch_call;  // Errors name texts[i] in a TranslateBatch.
  // Set by the first part that fails; the other parts then count as
  // cancelled and leave the decoder at the next step.
  std::atomic<bool> failed{false};
  std::mutex mutex;
  // Guarded by mutex: each part's target ids, [text][part].
  std::vector<std::vector<std::vector<int64_t>>> targets;
  int remaining = 0;         // Guarded by mutex: parts not yet completed.
  grpc::Status first_error;  // Guarded by mutex: the failure that came first.
};

TranslationService::TranslationService(ModelRegistry& registry,
                                       ServerMetrics& metrics,
                                       AssemblyPool& assembly)
    : registry_(registry), metrics_(metrics), assembly_(assembly) {}

grpc::ServerUnaryReactor* TranslationService::Translate(
    grpc::CallbackServerContext* context, const v1::TranslateRequest* request,
    v1::TranslateResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  RpcCompletion completion(kTranslateMethod, reactor, metrics_);
  std::shared_ptr<ServedModel> model = Choose(request->model(), completion);
  if (model == nullptr) return reactor;
  if (DeadlinePassed(*context)) {
    completion.Answer(DeadlineStatus());
    return reactor;
  }
  std::vector<PreparedText> texts;
  if (grpc::Status status =
          PrepareRequest(model->translator().pipeline(), *request, &texts);
      !status.ok()) {
    completion.Answer(status);
    return reactor;
  }
  DescribeCall(*model, texts.front(), response);
  Submit(context, completion, std::move(model), std::move(texts),
         {response->mutable_translation()}, /*batch_call=*/false);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::TranslateBatch(
    grpc::CallbackServerContext* context,
    const v1::TranslateBatchRequest* request,
    v1::TranslateBatchResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  RpcCompletion completion(kTranslateBatchMethod, reactor, metrics_);
  std::shared_ptr<ServedModel> model = Choose(request->model(), completion);
  if (model == nullptr) return reactor;
  const TextPipeline& pipeline = model->translator().pipeline();
  // A malformed text count is reported before a passed deadline.
  try {
    pipeline.limits().CheckTextCount(request->texts_size(), "texts");
  } catch (const std::invalid_argument& e) {
    completion.Answer(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what()));
    return reactor;
  }
  if (DeadlinePassed(*context)) {
    completion.Answer(DeadlineStatus());
    return reactor;
  }
  // Every text is checked and prepared first, so a bad one costs no
  // decoding.
  std::vector<PreparedText> texts;
  if (grpc::Status status = PrepareRequest(pipeline, *request, &texts);
      !status.ok()) {
    completion.Answer(status);
    return reactor;
  }
  DescribeCall(*model, texts.front(), response);
  // Pre-sized so each text's assembly writes only its own element.
  std::vector<v1::Translation*> outputs;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    outputs.push_back(response->add_translations());
  }
  Submit(context, completion, std::move(model), std::move(texts),
         std::move(outputs), /*batch_call=*/true);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::ListModels(
    grpc::CallbackServerContext* context,
    const v1::ListModelsRequest* /*request*/,
    v1::ListModelsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const RpcCompletion completion(kListModelsMethod, reactor, metrics_);
  for (const std::shared_ptr<ServedModel>& model : registry_.Models()) {
    DescribeModel(*model, response->add_models());
  }
  completion.Answer(grpc::Status::OK);
  return reactor;
}

std::shared_ptr<ServedModel> TranslationService::Choose(
    const v1::ModelChoice& choice, RpcCompletion& completion) const {
  std::shared_ptr<ServedModel> model;
  if (grpc::Status status = registry_.Choose(choice, &model); !status.ok()) {
    completion.Answer(status);
    return nullptr;
  }
  completion.set_model(model->name());
  return model;
}

void TranslationService::Submit(grpc::CallbackServerContext* context,
                                const RpcCompletion& completion,
                                std::shared_ptr<ServedModel> model,
                                std::vector<PreparedText> texts,
                                std::vector<v1::Translation*> outputs,
                                bool batch_call) {
  auto state = std::make_shared<CallState>(completion, std::move(model),
                                           std::move(texts), std::move(outputs),
                                           batch_call);
  std::vector<PendingRequest> requests;
  for (std::size_t t = 0; t < state->texts.size(); ++t) {
    for (std::size_t part = 0; part < state->texts[t].parts.size(); ++part) {
      PendingRequest request;
      request.source = state->texts[t].parts[part];
      request.deadline = context->deadline();
      request.cancelled = [context, state] {
        return state->failed.load() || context->IsCancelled();
      };
      request.done = [this, state, t, part](const grpc::Status& decode_status,
                                            std::vector<int64_t> target_ids) {
        PartDone(state, t, part, decode_status, std::move(target_ids));
      };
      requests.push_back(std::move(request));
    }
  }
  // Every part is queued or none: a full queue refuses the whole call
  // before anything decodes.
  if (grpc::Status status = state->model->batcher().SubmitAll(requests);
      !status.ok()) {
    completion.Answer(status);
  }
}

void TranslationService::PartDone(const std::shared_ptr<CallState>& state,
                                  std::size_t text, std::size_t part,
                                  const grpc::Status& decode_status,
                                  std::vector<int64_t> target_ids) const {
  {
    std::lock_guard<std::mutex> lock(state->mutex);
    // The first failure is the cause; the CANCELLED of the siblings it
    // stopped is not.
    if (!decode_status.ok() && !state->failed.exchange(true)) {
      state->first_error =
          state->batch_call
              ? grpc::Status(decode_status.error_code(),
                             "texts[" + std::to_string(text) +
                                 "]: " + decode_status.error_message())
              : decode_status;
    }
    state->targets[text][part] = std::move(target_ids);
    if (--state->remaining > 0) return;
  }
  // The last part: every other completion has run, so the state is the
  // pool's. Assembly leaves the decode thread, whose rows go on stepping.
  assembly_.Post([state] { FinishCall(*state); });
}

void TranslationService::FinishCall(CallState& state) {
  grpc::Status status = state.first_error;
  for (std::size_t t = 0; t < state.texts.size() && status.ok(); ++t) {
    status = FillTranslation(*state.model, state.texts[t], state.targets[t],
                             state.translations[t]);
    if (!status.ok() && state.batch_call) {
      status =
          grpc::Status(status.error_code(), "texts[" + std::to_string(t) +
                                                "]: " + status.error_message());
    }
  }
  state.completion.Answer(status);
}

grpc::Status TranslationService::FillTranslation(
    ServedModel& model, const PreparedText& text,
    const std::vector<std::vector<int64_t>>& part_targets,
    v1::Translation* translation) {
  TextTranslation assembled;
  try {
    assembled = model.translator().pipeline().Assemble(text, part_targets);
  } catch (const std::exception& e) {
    return grpc::Status(
        grpc::StatusCode::INTERNAL,
        std::string("assembling the translation failed: ") + e.what());
  }
  translation->set_text(std::move(assembled.text));
  translation->set_source_token_count(assembled.source_token_count);
  translation->set_generated_token_count(assembled.generated_token_count);
  translation->set_sentence_count(assembled.sentence_count);
  translation->set_split_sentence_count(assembled.split_sentence_count);
  translation->set_capped_count(assembled.capped_part_count);
  for (const std::string& word : assembled.unknown_words) {
    translation->add_unknown_words(word);
  }
  translation->set_unplaced_span_count(assembled.unplaced_span_count);
  model.metrics().ObserveText(assembled.sentence_count,
                              static_cast<int>(assembled.unknown_words.size()),
                              assembled.unplaced_span_count,
                              assembled.capped_part_count);
  return grpc::Status::OK;
}

}  // namespace fanyi
