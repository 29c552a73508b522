#include "server/http/translate_route.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <utility>

#include "common/formats/html_reader.h"
#include "common/pipeline/documents.h"
#include "common/text/language_detection.h"
#include "common/text/utf8.h"
#include "server/http/libretranslate_fields.h"
#include "server/pivot_job.h"
#include "server/text_job.h"

namespace fanyi {
namespace {

// What the cache keeps of a text's translation: what /translate answers
// with (the text, its alternatives, its confidence).
std::string TranslationForCache(const TextTranslation& translation) {
  return nlohmann::json({{"text", translation.text},
                         {"alternatives", translation.alternatives},
                         {"confidence", translation.confidence}})
      .dump();
}

// What TranslationForCache kept; nullopt for anything else (translated
// again, then).
std::optional<TextTranslation> TranslationFromCache(const std::string& kept) {
  try {
    const nlohmann::json value = nlohmann::json::parse(kept);
    TextTranslation translation;
    translation.text = value.at("text").get<std::string>();
    translation.alternatives =
        value.at("alternatives").get<std::vector<std::string>>();
    translation.confidence = value.at("confidence").get<double>();
    return translation;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

// One request's answer while its texts decode, perhaps on several models
// (a batch in several languages): the last job to finish answers.
struct TranslateRoute::Answer {
  std::mutex mutex;
  // Guarded by mutex: every text's answer so far (blank texts and texts
  // already in the target language as they came).
  std::vector<std::string> outputs;
  // Guarded by mutex: every text's other translations; empty for a text
  // that was not translated.
  std::vector<std::vector<std::string>> alternatives;
  // Guarded by mutex: every text's TextTranslation::confidence; 1 for a
  // text that was not translated.
  std::vector<double> confidences;
  bool wants_alternatives = false;  // The request asked for some.
  int remaining = 0;                // Guarded by mutex: jobs not yet done.
  grpc::Status first_error;         // Guarded by mutex.
  bool is_array = false;
  nlohmann::json detected;  // Per text, with source "auto"; else null.
  // Per text, how it went through the pivot language (null for a text one
  // model translated); null when none did.
  nlohmann::json pivots;
  HttpResponder respond;

  // Records text `index`'s translation. Needs mutex once jobs run.
  void Fill(std::size_t index, TextTranslation translation) {
    outputs[index] = std::move(translation.text);
    alternatives[index] = std::move(translation.alternatives);
    confidences[index] = translation.confidence;
  }

  // Records job results for the texts at `indices`; the last job answers.
  void JobDone(const std::vector<std::size_t>& indices,
               const grpc::Status& status,
               std::vector<TextTranslation> translations) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!status.ok() && first_error.ok()) first_error = status;
      for (std::size_t i = 0; i < translations.size(); ++i) {
        Fill(indices[i], std::move(translations[i]));
      }
      if (--remaining > 0) return;
    }
    Respond();
  }

  // Answers with the outputs, or the first error.
  void Respond() {
    if (!first_error.ok()) return respond(StatusResponse(first_error));
    nlohmann::json body = {
        {"translatedText",
         is_array ? nlohmann::json(outputs) : nlohmann::json(outputs.front())}};
    if (!detected.is_null()) {
      body["detectedLanguage"] = is_array ? detected : detected.front();
    }
    if (!pivots.is_null()) body["pivot"] = is_array ? pivots : pivots.front();
    if (wants_alternatives) {
      body["alternatives"] = is_array ? nlohmann::json(alternatives)
                                      : nlohmann::json(alternatives.front());
    }
    body["confidence"] = is_array ? nlohmann::json(confidences)
                                  : nlohmann::json(confidences.front());
    respond(JsonResponse(200, body));
  }
};

struct TranslateRoute::Request {
  std::vector<std::string> texts;
  std::vector<std::string> languages;  // Each text's source language.
  std::string source_code;             // As asked ("auto", "zh-Hant").
  std::string target_code;
  LanguageCode target;
  std::string model_name;  // The model asked for; empty: any.
  bool html = false;
  int alternatives = 0;
  TextLimits limits;  // The served models'.

  // How errors name text `index`: "q", or "q[3]" in an array.
  std::string Name(bool is_array, std::size_t index) const {
    return is_array ? "q[" + std::to_string(index) + "]" : "q";
  }
};

struct TranslateRoute::GroupJob {
  TextJob job;
  std::vector<std::size_t> indices;
  std::vector<std::string> cache_keys;  // Per index; empty: no cache.
  ModelRoute route;
  TextRequest request;
};

TranslateRoute::TranslateRoute(ModelRegistry& models, AssemblyPool& assembly,
                               const TranslateRouteOptions& options)
    : models_(models), assembly_(assembly), options_(options) {}

TranslateRoute::Request TranslateRoute::Read(const RequestFields& fields,
                                             Answer* answer) const {
  Request request;
  request.texts = ReadTexts(fields, &answer->is_array);
  request.source_code = RequiredCode(fields, "source");
  request.target_code = RequiredCode(fields, "target");
  const std::string format = StringField(fields, "format");
  if (!format.empty() && format != "text" && format != "html") {
    throw HttpError(400, "Invalid request: format must be text or html");
  }
  request.html = format == "html";
  request.alternatives =
      IntegerField(fields, "alternatives", 0, 0, kMaxRequestedBeam);
  answer->wants_alternatives = request.alternatives > 0;
  const std::optional<LanguageCode> target =
      ReadLanguageCode(request.target_code);
  if (!target) throw HttpError(400, request.target_code + " is not supported");
  request.target = *target;
  request.model_name = StringField(fields, "model");
  if (models_.Models().empty()) throw HttpError(503, "no model is served");
  request.limits = models_.limits();
  RequestLimits(request.limits)
      .CheckTextCount(request.texts.size(), "q");  // 400 if not.

  // Each text's source language: named, or detected among the languages
  // served into the target (and the target itself: such a text is kept).
  request.languages.resize(request.texts.size());
  if (request.source_code != "auto") {
    const std::optional<LanguageCode> source =
        ReadLanguageCode(request.source_code);
    if (!source) {
      throw HttpError(400, request.source_code + " is not supported");
    }
    std::fill(request.languages.begin(), request.languages.end(),
              source->language);
    return request;
  }
  std::vector<std::string> candidates = SourcesInto(models_, target->language);
  if (candidates.empty()) {
    throw HttpError(400, request.target_code + " is not supported");
  }
  candidates.push_back(target->language);
  answer->detected = nlohmann::json::array();
  for (std::size_t i = 0; i < request.texts.size(); ++i) {
    const std::string& text = request.texts[i];
    DetectedLanguage found;
    try {
      // A document's words, not its tags, tell its language.
      found =
          DetectLanguages(
              request.html
                  ? ReadHtml(text, request.limits.max_document_depth).Words()
                  : text,
              candidates)
              .front();
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, request.Name(answer->is_array, i) + ": " + e.what());
    }
    if (IsBlank(text)) found.confidence = 0;
    request.languages[i] = found.language;
    answer->detected.push_back(
        {{"confidence", found.confidence}, {"language", found.language}});
  }
  return request;
}

void TranslateRoute::ConvertScripts(const Request& request,
                                    Answer* answer) const {
  if (!IsChineseLanguage(request.target.language) || !request.target.script) {
    return;
  }
  for (std::size_t i = 0; i < request.texts.size(); ++i) {
    const std::string& text = request.texts[i];
    if (request.languages[i] != request.target.language || IsBlank(text)) {
      continue;
    }
    // Checked as a text to translate is, before OpenCC reads it.
    const std::string name = request.Name(answer->is_array, i);
    try {
      RequestLimits(request.limits).CheckText(text, name);  // Names it.
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, e.what());
    }
    try {
      DecodeUtf8(text);
      answer->outputs[i] =
          ConvertScript(converters_.For(*request.target.script), text,
                        request.html ? TextFormat::kHtml : TextFormat::kText,
                        request.limits.max_document_depth);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, name + ": " + e.what());
    }
  }
}

std::vector<TranslateRoute::GroupJob> TranslateRoute::PrepareJobs(
    const RequestFields& fields, const Request& request,
    const std::shared_ptr<const std::atomic<bool>>& client_gone,
    Answer* answer) const {
  // The texts to translate, by source language; the rest come back as
  // they are. Every group is prepared before any is queued, so a bad text
  // costs no decoding.
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < request.texts.size(); ++i) {
    if (!IsBlank(request.texts[i]) &&
        request.languages[i] != request.target.language) {
      groups[request.languages[i]].push_back(i);
    }
  }
  if (groups.empty()) return {};
  // The options every group asks for, read once.
  TextRequest options;
  options.field = "q";
  options.indexed = answer->is_array;
  options.format = request.html ? TextFormat::kHtml : TextFormat::kText;
  options.beam_size =
      IntegerField(fields, "beam_size", 0, 0, kMaxRequestedBeam);
  options.alternatives = request.alternatives;
  options.glossary = ReadGlossary(fields);
  options.do_not_translate = StringList(fields, "do_not_translate");
  options.template_tokens =
      !BooleanField(fields, "translate_template_tokens", false);
  std::vector<GroupJob> jobs;
  for (const auto& [language, indices] : groups) {
    ModelRoute route = ChooseRoute(
        models_, language, request.target.language,
        request.source_code == "auto" ? language : request.source_code,
        request.target_code, request.model_name);
    TextRequest group_request = options;
    if (route.back()->translator().pipeline().writes_chinese()) {
      group_request.script = request.target.script;
    }
    // Texts answered the same way before come from the cache; the others
    // are translated, and kept there once they are.
    std::vector<std::size_t> missed;
    std::vector<std::string> keys;
    const std::string key_start =
        options_.cache != nullptr ? RouteCacheKey("http", route, group_request)
                                  : "";
    for (std::size_t i : indices) {
      if (options_.cache != nullptr) {
        std::string key = key_start;
        AppendKeyPart(request.texts[i], &key);
        if (std::optional<std::string> kept = options_.cache->Get(key)) {
          if (std::optional<TextTranslation> cached =
                  TranslationFromCache(*kept)) {
            answer->Fill(i, std::move(*cached));
            continue;
          }
        }
        keys.push_back(std::move(key));
      }
      missed.push_back(i);
    }
    if (route.size() > 1) {
      const nlohmann::json pivot = {
          {"language", kPivotLanguage},
          {"models", {route.front()->name(), route.back()->name()}}};
      if (answer->pivots.is_null()) {
        answer->pivots = nlohmann::json::array();
        answer->pivots.get_ref<nlohmann::json::array_t&>().resize(
            request.texts.size());
      }
      for (std::size_t i : indices) answer->pivots[i] = pivot;
    }
    if (missed.empty()) continue;
    group_request.indices = missed;
    for (std::size_t i : missed)
      group_request.texts.push_back(request.texts[i]);
    TextJob job;
    try {
      job.texts = PrepareRoute(route, group_request);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, e.what());
    }
    job.deadline =
        std::chrono::system_clock::now() + options_.translate_timeout;
    if (client_gone != nullptr) {
      job.cancelled = [client_gone] { return client_gone->load(); };
    }
    jobs.push_back({std::move(job), std::move(missed), std::move(keys),
                    std::move(route), std::move(group_request)});
  }
  return jobs;
}

void TranslateRoute::Translate(
    const RequestFields& fields,
    std::shared_ptr<const std::atomic<bool>> client_gone,
    HttpResponder respond) const {
  auto answer = std::make_shared<Answer>();
  answer->respond = std::move(respond);
  const Request request = Read(fields, answer.get());
  answer->outputs = request.texts;
  answer->alternatives.resize(request.texts.size());
  answer->confidences.assign(request.texts.size(), 1.0);
  ConvertScripts(request, answer.get());
  std::vector<GroupJob> jobs =
      PrepareJobs(fields, request, client_gone, answer.get());
  if (jobs.empty()) return answer->Respond();
  answer->remaining = static_cast<int>(jobs.size());
  for (GroupJob& group : jobs) {
    group.job.done = [answer, indices = group.indices,
                      keys = std::move(group.cache_keys),
                      cache = options_.cache](
                         const grpc::Status& status,
                         std::vector<TextTranslation> translations) {
      for (std::size_t i = 0; i < keys.size() && i < translations.size(); ++i) {
        cache->Put(keys[i], TranslationForCache(translations[i]));
      }
      answer->JobDone(indices, status, std::move(translations));
    };
    if (grpc::Status status = SubmitRoute(assembly_, group.route,
                                          std::move(group.job), group.request);
        !status.ok()) {
      answer->JobDone(group.indices, status, {});
    }
  }
}

}  // namespace fanyi
