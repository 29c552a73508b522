#ifndef FANYI_SERVER_HTTP_LIBRETRANSLATE_API_H_
#define FANYI_SERVER_HTTP_LIBRETRANSLATE_API_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/assembly_pool.h"
#include "server/http/api_access.h"
#include "server/http/client_address.h"
#include "server/http/detect_route.h"
#include "server/http/fair_pool.h"
#include "server/http/file_translation.h"
#include "server/http/http_metrics.h"
#include "server/http/http_server.h"
#include "server/http/libretranslate_options.h"
#include "server/http/suggest_route.h"
#include "server/http/translate_route.h"
#include "server/model_registry.h"

namespace fanyi {

// A route the API serves, with the methods it answers. A path ending in
// "{name}" matches any one last segment in its place.
struct HttpRoute {
  std::string path;
  std::vector<std::string> methods;

  bool Matches(const std::string& request_path) const;
};

// LibreTranslate's HTTP API (as its server, v1.9, answers it) on fanyi's
// engine: the served models of a ModelRegistry, each text through its
// model's TextPipeline and the same batcher and assembly pool as gRPC
// (SubmitTextJob, through TranslateRoute); files through FileTranslation. Every
// answer is JSON, errors as {"error": "..."} with LibreTranslate's status codes
// and messages, and carries its CORS header. Thread-safe; a request may be
// answered later, from the assembly pool.
class LibreTranslateApi {
 public:
  // `models`, `assembly` and `metrics` must outlive this; `serving` says
  // whether the server serves (for /health).
  LibreTranslateApi(ModelRegistry& models, AssemblyPool& assembly,
                    HttpMetrics& metrics, std::function<bool()> serving,
                    LibreTranslateOptions options);

  // The HttpServer's handler: routes `request` and answers it, those with
  // a body to read from the parsing pool.
  void Handle(HttpRequest request, HttpResponder respond) const;

  // Shutting down: body routes are refused with 503 from now on, and the
  // requests already taken are read and handed on (their answers then come
  // from the batchers and the assembly pool). Call it before the HTTP
  // server stops, so that no answer comes after it.
  void Stop();

  // Every route served (GET /spec describes the same).
  static const std::vector<HttpRoute>& Routes();

 private:
  // On the parsing pool: reads the body of a request to /translate,
  // /detect, /suggest or /translate_file, counts it against its client's rate
  // and serves it; 499 without reading when its client has gone already.
  void Serve(const HttpRequest& request, const HttpResponder& answer) const;
  // GET /languages: each served language with the codes it translates to,
  // through the pivot language too.
  HttpResponse Languages() const;
  // GET /health: 200 {"status":"ok"} while the server serves, else 503.
  HttpResponse Health() const;
  // GET /frontend/settings: what LibreTranslate's page reads at start.
  HttpResponse FrontendSettings() const;

  ModelRegistry& models_;
  AssemblyPool& assembly_;
  HttpMetrics& metrics_;
  const std::function<bool()> serving_;
  const LibreTranslateOptions options_;
  // Whose forwarded addresses are believed (trust_forwarded_for).
  const AddressRanges trusted_proxies_;
  const ApiAccess access_;          // Keys and limits.
  const TranslateRoute translate_;  // /translate.
  const DetectRoute detect_;        // /detect.
  const FileTranslation files_;     // /translate_file and /download_file.
  // /suggest; null without options_.suggestions_db.
  const std::unique_ptr<const SuggestRoute> suggest_;
  // Mutable: handing it work is not a change of the API's state. Last, so
  // that it finishes its requests while the rest is still there.
  mutable FairPool parsing_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_LIBRETRANSLATE_API_H_
