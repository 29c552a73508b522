#include "server/translation_service.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "common/formats/html_reader.h"
#include "common/pipeline/documents.h"
#include "common/pipeline/request_limits.h"
#include "common/text/language_detection.h"
#include "server/pivot_job.h"
#include "server/raw_messages.h"
#include "server/request_preparation.h"
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

// Whether `choice` asks for Chinese into Chinese: the texts are only
// written in the script asked for, with no model (OpenCC).
bool IsScriptOnly(const v1::ModelChoice& choice) {
  return choice.model().empty() &&
         choice.source_language() == choice.target_language() &&
         IsChineseLanguage(choice.source_language());
}

// Fills what a Translate or TranslateBatch response says of the whole call:
// the model (and the pivot's), and the beam size and script every text of
// it got (`beam_size`, and the script `request` asks for).
template <typename Response>
void DescribeCall(const ModelRoute& route, int beam_size,
                  const TextRequest& request, Response* response) {
  const ServedModel& model = *route.back();
  response->set_model_version(model.translator().model_version());
  response->mutable_model()->set_name(model.name());
  response->mutable_model()->set_version(model.version());
  if (route.size() > 1) {
    response->mutable_pivot_model()->set_name(route.front()->name());
    response->mutable_pivot_model()->set_version(route.front()->version());
    response->set_pivot_language(kPivotLanguage);
  }
  response->set_beam_size(beam_size);
  if (model.translator().pipeline().writes_chinese()) {
    response->set_script(
        ScriptToProto(request.script.value_or(ChineseScript::kSimplified)));
  }
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
  info->set_length_penalty(translator.length_penalty());
}

}  // namespace

// Completes one RPC exactly once: records its metrics (under the model
// chosen, "" before one is), then finishes the reactor. Metrics are
// recorded first so that a client that has its answer also sees it counted.
class TranslationService::RpcCompletion {
 public:
  // `write_response`, when given, writes the response message out before
  // an OK answer (a raw method's): its failure is the answer then.
  RpcCompletion(const char* method, grpc::ServerUnaryReactor* reactor,
                ServerMetrics& metrics,
                std::function<grpc::Status()> write_response = nullptr)
      : method_(method),
        reactor_(reactor),
        metrics_(metrics),
        write_response_(std::move(write_response)),
        start_(std::chrono::steady_clock::now()) {
    metrics_.RequestStarted();
  }

  // The model the RPC chose, for its metrics.
  void set_model(const std::string& model) { model_ = model; }

  void Answer(grpc::Status status) const {
    if (status.ok() && write_response_) status = write_response_();
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
  const std::function<grpc::Status()> write_response_;
  const std::chrono::steady_clock::time_point start_;
};

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

grpc::Status TranslationService::DetectSource(
    const std::vector<std::string_view>& texts, bool html,
    v1::ModelChoice* choice,
    std::vector<v1::DetectedLanguage>* detected) const {
  // The sources of the pairs that fit (the named model's, or every pair
  // served, pivots included); the targets of those sources are candidates
  // too, so that a text already in the target is found out rather than
  // read as the likeliest source.
  std::vector<ServedPair> pairs;
  if (choice->model().empty()) {
    pairs = registry_.Pairs();
  } else if (std::shared_ptr<ServedModel> named =
                 registry_.Find(choice->model())) {
    pairs.push_back({named->translator().source_language(),
                     named->translator().target_language()});
  }
  std::vector<std::string> sources;
  std::vector<std::string> candidates;
  const auto add = [](std::vector<std::string>& list, const std::string& code) {
    if (std::find(list.begin(), list.end(), code) == list.end()) {
      list.push_back(code);
    }
  };
  for (const ServedPair& pair : pairs) {
    if (choice->target_language().empty() ||
        pair.target == choice->target_language()) {
      add(sources, pair.source);
    }
  }
  candidates = sources;
  for (const ServedPair& pair : pairs) {
    if (std::find(sources.begin(), sources.end(), pair.source) !=
        sources.end()) {
      add(candidates, pair.target);
    }
  }
  if (sources.empty()) {
    return grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        "source_language auto: no served model translates into \"" +
            choice->target_language() + "\"");
  }
  const int max_depth = registry_.limits().max_document_depth;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string name =
        texts.size() > 1 ? "texts[" + std::to_string(i) + "]" : "text";
    DetectedLanguage found;
    try {
      found = DetectLanguages(
                  html ? ReadHtml(std::string(texts[i]), max_depth).Words()
                       : std::string(texts[i]),
                  candidates)
                  .front();
    } catch (const std::invalid_argument& e) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          name + ": " + e.what());
    }
    if (std::find(sources.begin(), sources.end(), found.language) ==
        sources.end()) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          name + " reads as " + found.language +
                              ", which no served model translates from here");
    }
    if (!detected->empty() && detected->front().language() != found.language) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          "source_language auto: texts[0] reads as " +
              detected->front().language() + " and " + name + " as " +
              found.language +
              "; one call is translated by one model, so send each language "
              "in its own call (HTTP /translate groups them itself)");
    }
    v1::DetectedLanguage& language = detected->emplace_back();
    language.set_language(found.language);
    language.set_confidence(found.confidence);
  }
  if (!detected->empty()) {
    choice->set_source_language(detected->front().language());
  }
  return grpc::Status::OK;
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
      status = WriteInScript(text_request, {response->mutable_translation()},
                             response);
    }
    completion.Answer(status);
    return;
  }
  if (choice.source_language() == "auto") {
    std::vector<v1::DetectedLanguage> detected;
    if (grpc::Status status =
            DetectSource({request.text()}, request.format() == v1::FORMAT_HTML,
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
      status = WriteInScript(text_request, outputs, response);
    }
    completion.Answer(status);
    return;
  }
  std::vector<v1::DetectedLanguage> detected;
  if (choice.source_language() == "auto" && request.texts_size() > 0) {
    const std::vector<std::string_view> texts(request.texts().begin(),
                                              request.texts().end());
    if (grpc::Status status = DetectSource(
            texts, request.format() == v1::FORMAT_HTML, &choice, &detected);
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
      TakeFromCache(route, &text_request, &outputs, &cache_keys);
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

template <typename Response>
grpc::Status TranslationService::WriteInScript(
    const TextRequest& request, const std::vector<v1::Translation*>& outputs,
    Response* response) const {
  const ChineseScript script =
      request.script.value_or(ChineseScript::kSimplified);
  const int max_depth = registry_.limits().max_document_depth;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    try {
      outputs[i]->set_text(ConvertScript(converters_.For(script),
                                         request.texts[i], request.format,
                                         max_depth));
    } catch (const std::invalid_argument& e) {
      return grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          (outputs.size() > 1 ? "texts[" + std::to_string(i) + "]" : "text") +
              ": " + e.what());
    }
  }
  response->set_script(ScriptToProto(script));
  return grpc::Status::OK;
}

int TranslationService::TakeFromCache(
    const ModelRoute& route, TextRequest* request,
    std::vector<v1::Translation*>* outputs,
    std::vector<std::string>* cache_keys) const {
  if (cache_ == nullptr) return 0;
  const std::string key_start = RouteCacheKey("grpc", route, *request);
  int beam_size = 0;
  TextRequest missed = *request;
  missed.texts.clear();
  missed.indices.clear();
  std::vector<v1::Translation*> missed_outputs;
  for (std::size_t i = 0; i < request->texts.size(); ++i) {
    std::string key = key_start;
    AppendKeyPart(request->texts[i], &key);
    v1::TranslateResponse kept;
    if (std::optional<std::string> value = cache_->Get(key);
        value && kept.ParseFromString(*value)) {
      (*outputs)[i]->MergeFrom(kept.translation());
      beam_size = kept.beam_size();
      continue;
    }
    missed.texts.push_back(request->texts[i]);
    missed.indices.push_back(request->indices.empty() ? i
                                                      : request->indices[i]);
    missed_outputs.push_back((*outputs)[i]);
    cache_keys->push_back(std::move(key));
  }
  *request = std::move(missed);
  *outputs = std::move(missed_outputs);
  return beam_size;
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
  const std::vector<std::shared_ptr<ServedModel>> served = registry_.Models();
  if (served.empty()) {
    completion.Answer(
        grpc::Status(grpc::StatusCode::UNAVAILABLE, "no model is served"));
    return reactor;
  }
  const TextLimits& limits = registry_.limits();
  try {
    RequestLimits(limits).CheckTextCount(request->texts_size(), "texts");
    const std::vector<std::string> candidates = registry_.DetectionCandidates();
    const bool html = request->format() == v1::FORMAT_HTML;
    for (int i = 0; i < request->texts_size(); ++i) {
      const std::string& text = request->texts(i);
      std::vector<DetectedLanguage> ranked;
      try {
        ranked = DetectLanguages(
            html ? ReadHtml(text, limits.max_document_depth).Words() : text,
            candidates);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("texts[" + std::to_string(i) +
                                    "]: " + e.what());
      }
      v1::LanguageRanking* ranking = response->add_rankings();
      for (const DetectedLanguage& found : ranked) {
        v1::DetectedLanguage* language = ranking->add_languages();
        language->set_language(found.language);
        language->set_confidence(found.confidence);
      }
    }
  } catch (const std::invalid_argument& e) {
    response->Clear();
    completion.Answer(
        grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, e.what()));
    return reactor;
  }
  completion.Answer(grpc::Status::OK);
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
        // What the cache keeps: the text's translation, and the beam it
        // was made with (the call's answer names it).
        v1::TranslateResponse kept;
        *kept.mutable_translation() = *outputs[t];
        kept.mutable_translation()->clear_detected_language();
        kept.set_beam_size(beam_sizes[t]);
        cache->Put(cache_keys[t], kept.SerializeAsString());
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

void TranslationService::FillTranslation(TextTranslation assembled,
                                         v1::Translation* translation) {
  translation->set_text(std::move(assembled.text));
  translation->set_source_token_count(assembled.source_token_count);
  translation->set_generated_token_count(assembled.generated_token_count);
  translation->set_sentence_count(assembled.sentence_count);
  translation->set_split_sentence_count(assembled.split_sentence_count);
  translation->set_capped_count(assembled.capped_part_count);
  for (std::string& word : assembled.unknown_words) {
    translation->add_unknown_words(std::move(word));
  }
  translation->set_unplaced_span_count(assembled.unplaced_span_count);
  translation->set_confidence(assembled.confidence);
  translation->set_broken_count(assembled.broken_part_count);
  translation->set_repaired_count(assembled.repaired_part_count);
}

}  // namespace fanyi
