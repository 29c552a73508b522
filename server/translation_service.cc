#include "server/translation_service.h"

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "common/pipeline/request_limits.h"
#include "server/cached_translations.h"
#include "server/pivot_job.h"
#include "server/raw_messages.h"
#include "server/request_preparation.h"
#include "server/script_only.h"
#include "server/service_responses.h"
#include "server/source_detection.h"
#include "server/text_job.h"

namespace fanyi {
namespace {

constexpr char kTranslateMethod[] = "Translate";
constexpr char kTranslateBatchMethod[] = "TranslateBatch";
constexpr char kListModelsMethod[] = "ListModels";
constexpr char kDetectMethod[] = "Detect";

// True when the client's deadline has already passed.
bool DeadlinePassed(const grpc::CallbackServerContext& context) {
  return context.deadline() <= std::chrono::system_clock::now();
}

grpc::Status DeadlineStatus() {
  return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                      "deadline passed before the request was queued");
}

}  // namespace

TranslationService::TranslationService(ModelRegistry& registry,
                                       ServerMetrics& metrics,
                                       AssemblyPool& assembly,
                                       TranslationCache* cache)
    : registry_(registry),
      metrics_(metrics),
      assembly_(assembly),
      cache_(cache) {}

// A raw method's request and response messages, alive until it answers.
template <typename Request, typename Response>
struct TranslationService::RawCall {
  Request request;
  Response response;
};

template <typename Request, typename Response>
grpc::ServerUnaryReactor* TranslationService::Raw(
    const char* method, grpc::CallbackServerContext* context,
    const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
    void (TranslationService::*handle)(grpc::CallbackServerContext*,
                                       RpcCompletion, const Request&,
                                       Response*)) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto call = std::make_shared<RawCall<Request, Response>>();
  RpcCompletion completion(method, reactor, metrics_, [call, response] {
    return WriteMessage(call->response, response);
  });
  if (grpc::Status status = ReadMessage(*request, &call->request);
      !status.ok()) {
    completion.Answer(status);
    return reactor;
  }
  (this->*handle)(context, completion, call->request, &call->response);
  return reactor;
}

grpc::ServerUnaryReactor* TranslationService::Translate(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Raw(kTranslateMethod, context, request, response,
             &TranslationService::TranslateText);
}

grpc::ServerUnaryReactor* TranslationService::TranslateBatch(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return Raw(kTranslateBatchMethod, context, request, response,
             &TranslationService::TranslateTexts);
}

void TranslationService::TranslateText(grpc::CallbackServerContext* context,
                                       RpcCompletion completion,
                                       const v1::TranslateRequest& request,
                                       v1::TranslateResponse* response) {
  v1::ModelChoice choice = request.model();
  if (IsScriptOnly(choice)) {
    TextRequest text_request;
    grpc::Status status = ReadRequest(request, &text_request);
    if (status.ok()) {
      status = WriteInScript(converters_, registry_.limits().max_document_depth,
                             text_request, {response->mutable_translation()},
                             response);
    }
    completion.Answer(status);
    return;
  }
  if (choice.source_language() == "auto") {
    std::vector<v1::DetectedLanguage> detected;
    if (grpc::Status status = DetectSource(registry_, {request.text()},
                                           request.format() == v1::FORMAT_HTML,
                                           &choice, &detected);
        !status.ok()) {
      completion.Answer(status);
      return;
    }
    *response->mutable_translation()->mutable_detected_language() =
        detected.front();
  }
  const ModelRoute route = Choose(choice, completion);
  if (route.empty()) return;
  if (DeadlinePassed(*context)) {
    completion.Answer(DeadlineStatus());
    return;
  }
  TextRequest text_request;
  if (grpc::Status status = ReadRequest(request, &text_request); !status.ok()) {
    completion.Answer(status);
    return;
  }
  PrepareAndSubmit(context, completion, route, std::move(text_request),
                   {response->mutable_translation()}, response,
                   /*batch_call=*/false);
}

void TranslationService::TranslateTexts(
    grpc::CallbackServerContext* context, RpcCompletion completion,
    const v1::TranslateBatchRequest& request,
    v1::TranslateBatchResponse* response) {
  v1::ModelChoice choice = request.model();
  if (IsScriptOnly(choice)) {
    TextRequest text_request;
    grpc::Status status = ReadRequest(request, &text_request);
    if (status.ok()) {
      std::vector<v1::Translation*> outputs;
      for (int i = 0; i < request.texts_size(); ++i) {
        outputs.push_back(response->add_translations());
      }
      status = WriteInScript(converters_, registry_.limits().max_document_depth,
                             text_request, outputs, response);
    }
    completion.Answer(status);
    return;
  }
  std::vector<v1::DetectedLanguage> detected;
  if (choice.source_language() == "auto" && request.texts_size() > 0) {
    const std::vector<std::string_view> texts(request.texts().begin(),
                                              request.texts().end());
    if (grpc::Status status =
            DetectSource(registry_, texts, request.format() == v1::FORMAT_HTML,
                         &choice, &detected);
        !status.ok()) {
      completion.Answer(status);
      return;
    }
  }
  const ModelRoute route = Choose(choice, completion);
  if (route.empty()) return;
  // A malformed text count is reported before a passed deadline.
  try {
    route.front()->translator().pipeline().limits().CheckTextCount(
        request.texts_size(), "texts");
  } catch (const std::invalid_argument& e) {
    completion.Answer(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what()));
    return;
  }
  if (DeadlinePassed(*context)) {
    completion.Answer(DeadlineStatus());
    return;
  }
  // Every text is checked and prepared first, so a bad one costs no
  // decoding.
  TextRequest text_request;
  if (grpc::Status status = ReadRequest(request, &text_request); !status.ok()) {
    completion.Answer(status);
    return;
  }
  // Pre-sized so each text's assembly writes only its own element.
  std::vector<v1::Translation*> outputs;
  for (int i = 0; i < request.texts_size(); ++i) {
    outputs.push_back(response->add_translations());
    if (static_cast<std::size_t>(i) < detected.size()) {
      *outputs.back()->mutable_detected_language() = detected[i];
    }
  }
  PrepareAndSubmit(context, completion, route, std::move(text_request),
                   std::move(outputs), response, /*batch_call=*/true);
}

template <typename Response>
void TranslationService::PrepareAndSubmit(grpc::CallbackServerContext* context,
                                          const RpcCompletion& completion,
                                          const ModelRoute& route,
                                          TextRequest text_request,
                                          std::vector<v1::Translation*> outputs,
                                          Response* response, bool batch_call) {
  std::vector<std::string> cache_keys;
  const int cached_beam_size =
      TakeFromCache(cache_, route, &text_request, &outputs, &cache_keys);
  if (cached_beam_size > 0 && outputs.empty()) {
    DescribeCall(route, cached_beam_size, text_request, response);
    completion.Answer(grpc::Status::OK);
    return;
  }
  std::vector<PreparedText> texts;
  if (grpc::Status status = PrepareRequest(route, text_request, &texts);
      !status.ok()) {
    completion.Answer(status);
    return;
  }
  DescribeCall(route, texts.front().beam_size, text_request, response);
  Submit(context, completion, route, std::move(texts), text_request,
         std::move(outputs), std::move(cache_keys), batch_call);
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

grpc::ServerUnaryReactor* TranslationService::Detect(
    grpc::CallbackServerContext* context, const v1::DetectRequest* request,
    v1::DetectResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const RpcCompletion completion(kDetectMethod, reactor, metrics_);
  if (registry_.Models().empty()) {
    completion.Answer(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "no model is served"));
    return reactor;
  }
  completion.Answer(RankLanguages(registry_, *request, response));
  return reactor;
}

ModelRoute TranslationService::Choose(const v1::ModelChoice& choice,
                                      RpcCompletion& completion) const {
  ModelRoute route;
  if (grpc::Status status = registry_.ChooseRoute(choice, &route);
      !status.ok()) {
    completion.Answer(status);
    return {};
  }
  completion.set_model(route.back()->name());
  return route;
}

void TranslationService::Submit(
    grpc::CallbackServerContext* context, const RpcCompletion& completion,
    const ModelRoute& route, std::vector<PreparedText> texts,
    const TextRequest& request, std::vector<v1::Translation*> outputs,
    std::vector<std::string> cache_keys, bool batch_call) {
  std::vector<int> beam_sizes;
  for (const PreparedText& text : texts) beam_sizes.push_back(text.beam_size);
  TextJob job;
  job.texts = std::move(texts);
  job.deadline = context->deadline();
  job.cancelled = [context] { return context->IsCancelled(); };
  job.name_texts = batch_call;
  job.done = [completion, outputs = std::move(outputs),
              cache_keys = std::move(cache_keys),
              beam_sizes = std::move(beam_sizes),
              cache = cache_](const grpc::Status& status,
                              std::vector<TextTranslation> translations) {
    for (std::size_t t = 0; t < translations.size(); ++t) {
      FillTranslation(std::move(translations[t]), outputs[t]);
      if (t < cache_keys.size()) {
        KeepInCache(*cache, cache_keys[t], *outputs[t], beam_sizes[t]);
      }
    }
    completion.Answer(status);
  };
  if (grpc::Status status =
          SubmitRoute(assembly_, route, std::move(job), request);
      !status.ok()) {
    completion.Answer(status);
  }
}

}  // namespace fanyi
