#include "server/http/libretranslate_api.h"

#include <algorithm>
#include <cstddef>
#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/formats/html_reader.h"
#include "common/pipeline/document_file.h"
#include "common/pipeline/documents.h"
#include "common/pipeline/request_limits.h"
#include "common/text/language_detection.h"
#include "common/text/utf8.h"
#include "server/http/language_codes.h"
#include "server/http/libretranslate_fields.h"
#include "server/http/openapi_spec.h"
#include "server/http/web_page.h"
#include "server/pivot_job.h"
#include "server/text_job.h"

namespace fanyi {
namespace {

using Clock = std::chrono::steady_clock;

bool IsBlank(const std::string& text) {
  return text.find_first_not_of(" \t\r\n") == std::string::npos;
}

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

// What a request costs of its client's characters: the texts of
// /translate and /detect (q, a string or an array of them), the bytes of a
// file to translate; nothing for a suggestion.
RequestCost CostOf(const HttpRequest& request, const RequestFields& fields) {
  RequestCost cost;
  if (request.path == "/translate_file") {
    const UploadedFile* file = fields.File("file");
    if (file != nullptr) {
      cost.characters = static_cast<int64_t>(file->content.size());
    }
    return cost;
  }
  if (request.path != "/translate" && request.path != "/detect") return cost;
  const nlohmann::json& q = fields.Get("q");
  const auto add = [&cost](const nlohmann::json& text) {
    if (!text.is_string()) return;
    const auto characters = static_cast<int64_t>(
        CountUtf8Characters(text.get_ref<const std::string&>()));
    cost.characters += characters;
    cost.longest_text = std::max(cost.longest_text, characters);
  };
  if (q.is_array()) {
    for (const nlohmann::json& text : q) add(text);
  } else {
    add(q);
  }
  return cost;
}

}  // namespace

const std::vector<HttpRoute>& LibreTranslateApi::Routes() {
  static const std::vector<HttpRoute> kRoutes = {
      {"/", {"GET"}},
      {"/translate", {"POST"}},
      {"/detect", {"POST"}},
      // GET only, as LibreTranslate (its tests expect 405 for POST);
      // libretranslatepy sends a GET with a form body, which is one.
      {"/languages", {"GET"}},
      {"/health", {"GET"}},
      {"/translate_file", {"POST"}},
      {"/download_file/{name}", {"GET"}},
      {"/suggest", {"POST"}},
      {"/frontend/settings", {"GET"}},
      {"/spec", {"GET"}}};
  return kRoutes;
}

bool HttpRoute::Matches(const std::string& request_path) const {
  const std::size_t name = path.find("{name}");
  if (name == std::string::npos) return request_path == path;
  return request_path.size() > name &&
         request_path.compare(0, name, path, 0, name) == 0 &&
         request_path.find('/', name) == std::string::npos;
}

LibreTranslateApi::LibreTranslateApi(ModelRegistry& models,
                                     AssemblyPool& assembly,
                                     HttpMetrics& metrics,
                                     std::function<bool()> serving,
                                     LibreTranslateOptions options)
    : models_(models),
      assembly_(assembly),
      metrics_(metrics),
      serving_(std::move(serving)),
      options_(std::move(options)),
      trusted_proxies_(AddressRanges::Parse(options_.trusted_proxies)),
      access_(options_.access, metrics),
      files_(models, assembly,
             {options_.translate_timeout, options_.file_time_to_live,
              options_.max_stored_file_bytes,
              options_.max_client_stored_file_bytes, options_.url_prefix}),
      suggestions_(options_.suggestions_db.empty()
                       ? nullptr
                       : std::make_unique<SuggestionStore>(
                             options_.suggestions_db, options_.max_suggestions,
                             options_.max_suggestions_bytes)),
      parsing_(options_.parsing_threads, options_.max_waiting_requests,
               options_.max_client_waiting_requests, options_.max_large_reads) {
}

void LibreTranslateApi::Handle(HttpRequest request,
                               HttpResponder respond) const {
  if (options_.trust_forwarded_for) {
    request.peer =
        ClientAddress(request, trusted_proxies_, options_.forwarded_header);
  }
  const std::string& prefix = options_.url_prefix;
  if (!prefix.empty() && request.path.compare(0, prefix.size(), prefix) == 0) {
    if (request.path.size() == prefix.size()) {
      // The page's relative addresses need the slash.
      HttpResponse response = JsonResponse(301, nlohmann::json::object());
      response.headers.emplace_back("Location", prefix + "/");
      return respond(std::move(response));
    }
    if (request.path[prefix.size()] == '/') {
      request.path.erase(0, prefix.size());
    }
  }
  const HttpRoute* found = nullptr;
  for (const HttpRoute& known : Routes()) {
    if (known.Matches(request.path)) found = &known;
  }
  // The metrics' label: a served route, or "other" (so that probing random
  // paths adds no label sets).
  const std::string route = found != nullptr ? found->path : "other";
  const Clock::time_point start = Clock::now();
  // Every answer: counted, and with the CORS header LibreTranslate sends.
  HttpResponder answer = [this, route, start,
                          respond = std::move(respond)](HttpResponse response) {
    metrics_.Record(
        route, response.status,
        std::chrono::duration<double>(Clock::now() - start).count());
    response.headers.emplace_back("Access-Control-Allow-Origin", "*");
    respond(std::move(response));
  };
  if (request.method == "OPTIONS") {  // A browser's CORS preflight.
    HttpResponse response;
    response.headers = {{"Access-Control-Allow-Methods", "GET, OPTIONS, POST"},
                        {"Access-Control-Allow-Headers",
                         request.Header("Access-Control-Request-Headers")}};
    return answer(std::move(response));
  }
  if (found == nullptr) {
    return answer(ErrorResponse(404, "Not Found: " + request.path));
  }
  if (std::find(found->methods.begin(), found->methods.end(), request.method) ==
      found->methods.end()) {
    HttpResponse response = ErrorResponse(405, "Method Not Allowed");
    std::string allow;
    for (const std::string& method : found->methods) {
      allow += (allow.empty() ? "" : ", ") + method;
    }
    response.headers.emplace_back("Allow", allow);
    return answer(std::move(response));
  }
  if (request.path == "/") {
    HttpResponse response;
    response.content_type = "text/html; charset=utf-8";
    response.body = std::string(WebPage());
    return answer(std::move(response));
  }
  if (request.path == "/suggest" && suggestions_ == nullptr) {
    // As LibreTranslate without --suggestions.
    return answer(
        ErrorResponse(403, "Suggestions are disabled on this server."));
  }
  if (request.path == "/spec") {
    HttpResponse response;
    response.body = std::string(OpenApiSpec());
    return answer(std::move(response));
  }
  if (found->path == "/download_file/{name}") {
    return answer(files_.Download(
        DecodePercent(request.path.substr(request.path.rfind('/') + 1),
                      /*plus_is_space=*/false)));
  }
  if (request.path == "/languages") return answer(Languages());
  if (request.path == "/health") return answer(Health());
  if (request.path == "/frontend/settings") return answer(FrontendSettings());
  // /translate, /detect, /translate_file and /suggest read a body, and
  // documents in it: on the parsing pool, never on the connection's thread, so
  // that no request, however slow to read, holds up /health or other clients.
  // In turns with other clients: a client that sends slow bodies waits for
  // its own, not others for them.
  // Large ones (files; queries and bodies over large_body_bytes) a few at
  // a time.
  const std::string client = request.peer;
  const bool large =
      found->path == "/translate_file" ||
      request.query.size() + request.body.size() > options_.large_body_bytes;
  auto waiting = std::make_shared<const HttpRequest>(std::move(request));
  const FairPool::Outcome outcome = parsing_.TryPost(
      client, [this, waiting, answer] { Serve(*waiting, answer); },
      [answer] {
        answer(ErrorResponse(429,
                             "Slowdown: the server's queue of requests to "
                             "read is full, and yours was the newest of "
                             "the longest; retry later"));
      },
      large);
  switch (outcome) {
    case FairPool::Outcome::kTaken:
      return;
    case FairPool::Outcome::kFull:
      return answer(ErrorResponse(
          429, "Slowdown: " + std::to_string(options_.max_waiting_requests) +
                   " requests are waiting to be read already; retry later"));
    case FairPool::Outcome::kLargeFull:
      return answer(ErrorResponse(
          429,
          "Slowdown: " + std::to_string(options_.max_waiting_requests / 2) +
              " large requests (files, bodies over " +
              std::to_string(options_.large_body_bytes >> 10) +
              " KiB) are waiting to be read already; retry later"));
    case FairPool::Outcome::kClientFull:
      return answer(ErrorResponse(
          429,
          "Slowdown: " + std::to_string(options_.max_client_waiting_requests) +
              " of your requests are waiting to be read already; "
              "retry later"));
    case FairPool::Outcome::kStopped:
      return answer(ErrorResponse(503, "server is shutting down"));
  }
}

void LibreTranslateApi::Stop() { parsing_.StopTaking(); }

void LibreTranslateApi::Serve(const HttpRequest& request,
                              const HttpResponder& answer) const {
  if (request.ClientGone()) {
    return answer(ErrorResponse(499, "the client closed its connection"));
  }
  try {
    const RequestFields fields = [&] {
      try {
        return RequestFields::Read(request);
      } catch (const std::invalid_argument& e) {
        throw HttpError(400, std::string("Invalid request: ") + e.what());
      }
    }();
    const ApiCaller caller =
        access_.Admit(fields, request.peer, CostOf(request, fields));
    if (request.path == "/translate") {
      return Translate(fields, request.client_gone, answer);
    }
    if (request.path == "/translate_file") {
      return files_.Translate(fields, request, caller.client, answer);
    }
    if (request.path == "/suggest") {
      return answer(Suggest(fields, caller.api_key));
    }
    return Detect(fields, answer);
  } catch (const HttpError& e) {
    answer(ErrorResponse(e.status, e.what()));
  } catch (const std::invalid_argument& e) {  // A limit or a text refused.
    answer(ErrorResponse(400, e.what()));
  } catch (const std::exception& e) {
    answer(ErrorResponse(500, std::string("internal error: ") + e.what()));
  }
}

// One /translate request's answer while its texts decode, perhaps on
// several models (a batch in several languages): the last job to finish
// answers.
struct LibreTranslateApi::Answer {
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

void LibreTranslateApi::Translate(
    const RequestFields& fields,
    std::shared_ptr<const std::atomic<bool>> client_gone,
    HttpResponder respond) const {
  auto answer = std::make_shared<Answer>();
  answer->respond = std::move(respond);
  const std::vector<std::string> texts = ReadTexts(fields, &answer->is_array);
  const std::string source_code = RequiredCode(fields, "source");
  const std::string target_code = RequiredCode(fields, "target");
  const std::string format = StringField(fields, "format");
  if (!format.empty() && format != "text" && format != "html") {
    throw HttpError(400, "Invalid request: format must be text or html");
  }
  const bool html = format == "html";
  const int alternatives =
      IntegerField(fields, "alternatives", 0, 0, kMaxRequestedBeam);
  answer->wants_alternatives = alternatives > 0;
  const std::optional<LanguageCode> target = ReadLanguageCode(target_code);
  if (!target) throw HttpError(400, target_code + " is not supported");
  const std::string model_name = StringField(fields, "model");
  const TextLimits limits = [&] {
    const std::vector<std::shared_ptr<ServedModel>> served = models_.Models();
    if (served.empty()) throw HttpError(503, "no model is served");
    return served.front()->translator().pipeline().limits().text_limits();
  }();
  RequestLimits(limits).CheckTextCount(texts.size(), "q");  // 400 if not.

  // Each text's source language: named, or detected among the languages
  // served into the target (and the target itself: such a text is kept).
  std::vector<std::string> languages(texts.size());
  if (source_code == "auto") {
    std::vector<std::string> candidates =
        SourcesInto(models_, target->language);
    if (candidates.empty()) {
      throw HttpError(400, target_code + " is not supported");
    }
    candidates.push_back(target->language);
    answer->detected = nlohmann::json::array();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      DetectedLanguage found;
      try {
        // A document's words, not its tags, tell its language.
        found = DetectLanguages(
                    html ? ReadHtml(texts[i], limits.max_document_depth).Words()
                         : texts[i],
                    candidates)
                    .front();
      } catch (const std::invalid_argument& e) {
        throw HttpError(400,
                        (answer->is_array ? "q[" + std::to_string(i) + "]: "
                                          : std::string("q: ")) +
                            e.what());
      }
      if (IsBlank(texts[i])) found.confidence = 0;
      languages[i] = found.language;
      answer->detected.push_back(
          {{"confidence", found.confidence}, {"language", found.language}});
    }
  } else {
    const std::optional<LanguageCode> source = ReadLanguageCode(source_code);
    if (!source) throw HttpError(400, source_code + " is not supported");
    std::fill(languages.begin(), languages.end(), source->language);
  }

  // The texts to translate, by source language; the rest come back as
  // they are. Every group is prepared before any is queued, so a bad text
  // costs no decoding.
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (!IsBlank(texts[i]) && languages[i] != target->language) {
      groups[languages[i]].push_back(i);
    }
  }
  answer->outputs = texts;
  // A Chinese text already in the target language is written in the
  // target's script (OpenCC): zh to zh-Hant converts, with no model.
  if (IsChineseLanguage(target->language) && target->script) {
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (languages[i] != target->language || IsBlank(texts[i])) continue;
      // Checked as a text to translate is, before OpenCC reads it.
      const std::string name =
          answer->is_array ? "q[" + std::to_string(i) + "]" : "q";
      try {
        RequestLimits(limits).CheckText(texts[i], name);  // Names it.
      } catch (const std::invalid_argument& e) {
        throw HttpError(400, e.what());
      }
      try {
        DecodeUtf8(texts[i]);
      } catch (const std::invalid_argument& e) {
        throw HttpError(400, name + ": " + e.what());
      }
      try {
        answer->outputs[i] =
            ConvertScript(converters_.For(*target->script), texts[i],
                          html ? TextFormat::kHtml : TextFormat::kText,
                          limits.max_document_depth);
      } catch (const std::invalid_argument& e) {
        throw HttpError(400, name + ": " + e.what());
      }
    }
  }
  answer->alternatives.resize(texts.size());
  answer->confidences.assign(texts.size(), 1.0);
  // The options every group asks for, read once.
  TextRequest options;
  if (!groups.empty()) {
    options.field = "q";
    options.indexed = answer->is_array;
    options.format = html ? TextFormat::kHtml : TextFormat::kText;
    options.beam_size =
        IntegerField(fields, "beam_size", 0, 0, kMaxRequestedBeam);
    options.alternatives = alternatives;
    options.glossary = ReadGlossary(fields);
    options.do_not_translate = StringList(fields, "do_not_translate");
    options.template_tokens =
        !BooleanField(fields, "translate_template_tokens", false);
  }
  // Each group's job, prepared for its route's first model.
  struct GroupJob {
    TextJob job;
    std::vector<std::size_t> indices;
    std::vector<std::string> cache_keys;  // Per index; empty: no cache.
    ModelRoute route;
    TextRequest request;
  };
  std::vector<GroupJob> jobs;
  for (const auto& [language, indices] : groups) {
    ModelRoute route =
        ChooseRoute(models_, language, target->language,
                    source_code == "auto" ? language : source_code, target_code,
                    model_name);
    TextRequest request = options;
    if (route.back()->translator().pipeline().writes_chinese()) {
      request.script = target->script;
    }
    // Texts answered the same way before come from the cache; the others
    // are translated, and kept there once they are.
    std::vector<std::size_t> missed;
    std::vector<std::string> keys;
    const std::string key_start =
        options_.cache != nullptr ? RouteCacheKey("http", route, request) : "";
    for (std::size_t i : indices) {
      if (options_.cache != nullptr) {
        std::string key = key_start;
        AppendKeyPart(texts[i], &key);
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
        answer->pivots.get_ref<nlohmann::json::array_t&>().resize(texts.size());
      }
      for (std::size_t i : indices) answer->pivots[i] = pivot;
    }
    if (missed.empty()) continue;
    request.indices = missed;
    for (std::size_t i : missed) request.texts.push_back(texts[i]);
    TextJob job;
    try {
      job.texts = PrepareRoute(route, request);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, e.what());
    }
    job.deadline =
        std::chrono::system_clock::now() + options_.translate_timeout;
    if (client_gone != nullptr) {
      job.cancelled = [client_gone] { return client_gone->load(); };
    }
    jobs.push_back({std::move(job), std::move(missed), std::move(keys),
                    std::move(route), std::move(request)});
  }
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

void LibreTranslateApi::Detect(const RequestFields& fields,
                               HttpResponder respond) const {
  bool is_array = false;
  const std::vector<std::string> texts = ReadTexts(fields, &is_array);
  // fanyi's extension: a ranking per text of an array.
  const bool per_text = BooleanField(fields, "per_text", false);
  // The language a text is in, whatever the models serve.
  const std::vector<std::string> candidates = models_.DetectionCandidates();
  // Per language, over the texts it was found in: its confidences and the
  // characters of those texts.
  struct Found {
    std::string language;
    double confidence_sum = 0;
    int texts = 0;
    std::size_t characters = 0;
  };
  std::vector<Found> found;                       // In the order first found.
  nlohmann::json each = nlohmann::json::array();  // Per text.
  for (std::size_t i = 0; i < texts.size(); ++i) {
    std::vector<DetectedLanguage> ranked;
    try {
      ranked = DetectLanguages(texts[i], candidates);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, (is_array ? "q[" + std::to_string(i) + "]: "
                                     : std::string("q: ")) +
                               e.what());
    }
    const std::size_t characters = DecodeUtf8(texts[i]).size();
    nlohmann::json& own = each.emplace_back(nlohmann::json::array());
    for (const DetectedLanguage& language : ranked) {
      own.push_back({{"confidence", language.confidence},
                     {"language", language.language}});
      auto same = std::find_if(found.begin(), found.end(), [&](const Found& f) {
        return f.language == language.language;
      });
      if (same == found.end()) {
        same = found.insert(found.end(), Found{language.language});
      }
      same->confidence_sum += language.confidence;
      ++same->texts;
      same->characters += characters;
    }
  }
  if (!is_array || per_text) {
    respond(JsonResponse(200, is_array ? each : each.front()));
    return;
  }
  // As LibreTranslate answers a list: one ranking for all the texts, each
  // language's confidence averaged over the texts it was found in, ranked
  // by that average weighted by their length (stable: first found first
  // among equals); English at 0 when nothing was found.
  std::stable_sort(found.begin(), found.end(),
                   [](const Found& a, const Found& b) {
                     return a.confidence_sum / a.texts * a.characters >
                            b.confidence_sum / b.texts * b.characters;
                   });
  nlohmann::json ranking = nlohmann::json::array();
  for (const Found& language : found) {
    ranking.push_back({{"confidence", language.confidence_sum / language.texts},
                       {"language", language.language}});
  }
  if (ranking.empty())
    ranking.push_back({{"confidence", 0.0}, {"language", "en"}});
  respond(JsonResponse(200, ranking));
}

HttpResponse LibreTranslateApi::Languages() const {
  // Every language a served model reads or writes, under each code a
  // client may use for it, with the codes it translates to.
  std::map<std::string, std::vector<std::string>> targets;  // By language.
  for (const ServedPair& pair : models_.Pairs()) {
    std::vector<std::string>& codes = targets[pair.source];
    targets[pair.target];  // Listed even if only a target.
    for (const ListedLanguage& listed : ListedCodes(pair.target)) {
      if (std::find(codes.begin(), codes.end(), listed.code) == codes.end()) {
        codes.push_back(listed.code);
      }
    }
  }
  nlohmann::json languages = nlohmann::json::array();
  for (const auto& [language, codes] : targets) {
    for (const ListedLanguage& listed : ListedCodes(language)) {
      languages.push_back(
          {{"code", listed.code}, {"name", listed.name}, {"targets", codes}});
    }
  }
  return JsonResponse(200, languages);
}

HttpResponse LibreTranslateApi::Suggest(const RequestFields& fields,
                                        const std::string& api_key) const {
  Suggestion suggestion;
  suggestion.text = StringField(fields, "q");
  suggestion.suggestion = StringField(fields, "s");
  for (const auto& [name, value] : {std::pair{"q", &suggestion.text},
                                    std::pair{"s", &suggestion.suggestion}}) {
    if (value->empty()) {
      throw HttpError(
          400, std::string("Invalid request: missing ") + name + " parameter");
    }
    if (IsBlank(*value)) {
      throw HttpError(400,
                      std::string("Invalid request: ") + name + " is blank");
    }
    if (value->size() > kMaxSuggestionBytes) {
      throw HttpError(400, std::string("Invalid request: ") + name + " has " +
                               std::to_string(value->size()) +
                               " bytes; a suggestion's texts may have " +
                               std::to_string(kMaxSuggestionBytes));
    }
    try {
      DecodeUtf8(*value);
    } catch (const std::invalid_argument& e) {
      throw HttpError(400, std::string("Invalid request: ") + name +
                               " is not UTF-8: " + e.what());
    }
  }
  const std::string source_code = RequiredCode(fields, "source");
  const std::string target_code = RequiredCode(fields, "target");
  const std::optional<LanguageCode> source = ReadLanguageCode(source_code);
  if (!source) throw HttpError(400, source_code + " is not supported");
  const std::optional<LanguageCode> target = ReadLanguageCode(target_code);
  if (!target) throw HttpError(400, target_code + " is not supported");
  // The model that translates the pair: the one the suggestion corrects
  // (through the pivot: both, named "first+second", with the second's
  // version).
  const ModelRoute route =
      ChooseRoute(models_, source->language, target->language, source_code,
                  target_code, StringField(fields, "model"));
  const std::shared_ptr<ServedModel>& model = route.back();
  const RequestLimits limits(
      model->translator().pipeline().limits().text_limits());
  limits.CheckText(suggestion.text, "q");  // 400 beyond the text limit.
  limits.CheckText(suggestion.suggestion, "s");
  suggestion.source_language = source->language;
  suggestion.target_language = target->language;
  suggestion.model = route.size() == 1
                         ? model->name()
                         : route.front()->name() + "+" + model->name();
  suggestion.model_version = model->version();
  suggestion.api_key = api_key;
  suggestion.created = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  SuggestionStore::Outcome outcome = SuggestionStore::Outcome::kAdded;
  try {
    outcome = suggestions_->Add(suggestion);
  } catch (const std::runtime_error& e) {
    // The file's path and SQLite's words are the operator's, not a
    // client's.
    std::cerr << "fanyi-server: /suggest: " << e.what() << std::endl;
    throw HttpError(500, "the suggestion could not be stored");
  }
  switch (outcome) {
    case SuggestionStore::Outcome::kAdded:
      return JsonResponse(200, {{"success", true}});
    case SuggestionStore::Outcome::kTooLarge:  // Checked above.
      throw HttpError(400, "Invalid request: the suggestion is too large");
    case SuggestionStore::Outcome::kFull:
      throw HttpError(507, "the server's suggestions file is full");
    case SuggestionStore::Outcome::kBusy:
      throw HttpError(503,
                      "the server's suggestions file is busy; retry later");
  }
  throw HttpError(500, "the suggestion could not be stored");
}

HttpResponse LibreTranslateApi::Health() const {
  if (serving_ && !serving_()) {
    return JsonResponse(503, {{"status", "unavailable"}});
  }
  return JsonResponse(200, {{"status", "ok"}});
}

HttpResponse LibreTranslateApi::FrontendSettings() const {
  const std::vector<std::shared_ptr<ServedModel>> models = models_.Models();
  int char_limit = -1;
  int batch_limit = -1;
  nlohmann::json source = {{"code", "auto"}, {"name", "Auto Detect"}};
  nlohmann::json target = nullptr;
  if (!models.empty()) {
    const Translator& translator = models.front()->translator();
    char_limit = translator.pipeline().limits().text_limits().max_input_chars;
    batch_limit = translator.pipeline().limits().text_limits().max_texts;
    const ListedLanguage from =
        ListedCodes(translator.source_language()).front();
    const ListedLanguage to = ListedCodes(translator.target_language()).front();
    source = {{"code", from.code}, {"name", from.name}};
    target = {{"code", to.code}, {"name", to.name}};
  }
  return JsonResponse(200,
                      {{"charLimit", char_limit},
                       {"frontendTimeout", options_.frontend_timeout_ms},
                       {"batchLimit", batch_limit},
                       {"apiKeys", access_.keys_in_use()},
                       {"keyRequired", access_.key_required()},
                       {"suggestions", suggestions_ != nullptr},
                       {"filesTranslation", true},
                       {"supportedFilesFormat", DocumentFile::Extensions()},
                       {"language", {{"source", source}, {"target", target}}}});
}

}  // namespace fanyi
