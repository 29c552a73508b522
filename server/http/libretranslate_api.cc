#include "server/http/libretranslate_api.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/pipeline/document_file.h"
#include "common/pipeline/request_limits.h"
#include "common/text/utf8.h"
#include "server/http/language_codes.h"
#include "server/http/libretranslate_fields.h"
#include "server/http/openapi_spec.h"
#include "server/http/request_fields.h"
#include "server/http/web_page.h"

namespace fanyi {
namespace {

using Clock = std::chrono::steady_clock;

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
      translate_(models, assembly,
                 {options_.translate_timeout, options_.cache}),
      detect_(models),
      files_(models, assembly,
             {options_.translate_timeout, options_.file_time_to_live,
              options_.max_stored_file_bytes,
              options_.max_client_stored_file_bytes, options_.url_prefix,
              options_.pdf_reader}),
      suggest_(
          options_.suggestions_db.empty()
              ? nullptr
              : std::make_unique<SuggestRoute>(models, options_.suggestions_db,
                                               options_.max_suggestions,
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
  if (request.path == "/suggest" && suggest_ == nullptr) {
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
      return translate_.Translate(fields, request.client_gone, answer);
    }
    if (request.path == "/translate_file") {
      return files_.Translate(fields, request, caller.client, answer);
    }
    if (request.path == "/suggest") {
      return answer(suggest_->Suggest(fields, caller.api_key));
    }
    return detect_.Detect(fields, answer);
  } catch (const HttpError& e) {
    answer(ErrorResponse(e.status, e.what()));
  } catch (const std::invalid_argument& e) {  // A limit or a text refused.
    answer(ErrorResponse(400, e.what()));
  } catch (const std::exception& e) {
    answer(ErrorResponse(500, std::string("internal error: ") + e.what()));
  }
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
                       {"suggestions", suggest_ != nullptr},
                       {"filesTranslation", true},
                       {"supportedFilesFormat", DocumentFile::Extensions()},
                       {"language", {{"source", source}, {"target", target}}}});
}

}  // namespace fanyi
