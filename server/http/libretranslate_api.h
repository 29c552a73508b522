#ifndef FANYI_SERVER_HTTP_LIBRETRANSLATE_API_H_
#define FANYI_SERVER_HTTP_LIBRETRANSLATE_API_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/formats/suggestion_store.h"
#include "server/assembly_pool.h"
#include "server/http/api_access.h"
#include "server/http/client_address.h"
#include "server/http/fair_pool.h"
#include "server/http/file_translation.h"
#include "server/http/http_metrics.h"
#include "server/http/http_server.h"
#include "server/http/request_fields.h"
#include "server/http/translate_route.h"
#include "server/model_registry.h"
#include "server/translation_cache.h"

namespace fanyi {

// A route the API serves, with the methods it answers. A path ending in
// "{name}" matches any one last segment in its place.
struct HttpRoute {
  std::string path;
  std::vector<std::string> methods;

  bool Matches(const std::string& request_path) const;
};

// Settings of the LibreTranslate API.
struct LibreTranslateOptions {
  // API keys and the limits of each key or address.
  ApiAccessOptions access;
  // Translations kept to answer the same text asked the same way again;
  // null: none. Not owned: it must outlive the API.
  TranslationCache* cache = nullptr;
  // /frontend/settings' frontendTimeout: how long the page waits after
  // typing before it translates.
  int frontend_timeout_ms = 500;
  // The path a proxy serves the API under ("/fanyi"; empty: the root):
  // requests may come with it or without (a proxy that strips it), and
  // download addresses start with it. The page's own addresses are
  // relative, so it works under any prefix.
  std::string url_prefix;
  // Take each client's address from X-Forwarded-For or Forwarded when its
  // connection comes from one of trusted_proxies (CIDR ranges, commas
  // between), so that clients behind an ingress are told apart for the
  // limits, the file store and the parsing turns (ClientAddress).
  bool trust_forwarded_for = false;
  std::string trusted_proxies = "127.0.0.0/8,::1";
  // The header those proxies write the address into; the other is never
  // read.
  ForwardedHeader forwarded_header = ForwardedHeader::kXForwardedFor;
  // How long a /translate request may take before it fails with 504.
  std::chrono::milliseconds translate_timeout{60000};
  // How long a translated file waits for its download.
  std::chrono::seconds file_time_to_live{600};
  // What the translated files waiting for their download may take in all;
  // /translate_file answers 503 when they would take more.
  std::size_t max_stored_file_bytes = 256 << 20;
  // What one client's (API key's, else address's) may take; it gets 429
  // when they would take more.
  std::size_t max_client_stored_file_bytes = 32 << 20;
  // How uploaded .pdf files are read: in a process of their own when
  // pdf_reader.program is set, else in this one.
  PdfReaderOptions pdf_reader;
  // Threads that read the bodies of /translate, /detect and /translate_file
  // (and their documents), off the connection threads, taking the clients
  // (addresses) in turns, each on one thread at a time (FairPool). More
  // threads than cores: a client's cheap request need not wait for another
  // client's slow one to end, the cores are shared.
  int parsing_threads = 4;
  // Such requests waiting for a parsing thread, at most; more get 429 (or
  // push out the newest of the longest queue's).
  int max_waiting_requests = 64;
  // Of those, one client's at most; its next ones get 429.
  int max_client_waiting_requests = 16;
  // Large reads (a query and body over large_body_bytes, or a file to
  // translate) run this many at a time, in the clients' turns, and may take
  // half the waiting places: a hostile document may take a core and its
  // parse budget's memory (about 16 MiB + 48 B a byte of HTML) before it is
  // refused, and clients on many addresses would otherwise take that many
  // times over. Below 16 KiB, markup that Gumbo reads slowly (elements
  // nested in ways the pass before the parse misses) costs little.
  int max_large_reads = 1;
  std::size_t large_body_bytes = 16 << 10;
  // The SQLite file POST /suggest adds users' suggestions to (created when
  // missing; LibreTranslate's own suggestions.db will do); empty: /suggest
  // answers 403, as LibreTranslate does without --suggestions.
  std::string suggestions_db;
  // Suggestions the file may hold, and bytes it may take; /suggest answers
  // 507 beyond.
  int64_t max_suggestions = 1000000;
  int64_t max_suggestions_bytes = int64_t{1} << 30;
};

// LibreTranslate's HTTP API (as its server, v1.9, answers it) on fanyi's
// engine: the served models of a ModelRegistry, each text through its
// model's TextPipeline and the same batcher and assembly pool as gRPC
// (SubmitTextJob); files through FileTranslation. Every answer is JSON, errors
// as {"error": "..."} with LibreTranslate's status codes and messages, and
// carries its CORS header. Thread-safe; a request may be answered later, from
// the assembly pool.
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
  // /detect or /translate_file, counts it against its client's rate and
  // serves it; 499 without reading when its client has gone already.
  void Serve(const HttpRequest& request, const HttpResponder& answer) const;
  // POST /detect: q's languages among the served source languages, most
  // likely first.
  void Detect(const RequestFields& fields, HttpResponder respond) const;
  // GET /languages: each served language with the codes it translates to,
  // through the pivot language too.
  HttpResponse Languages() const;
  // POST /suggest: stores q's suggested translation s (from source to
  // target; each UTF-8, not blank, within the text limit and
  // kMaxSuggestionBytes) with the model that would translate it and the
  // client's key; {"success": true}. 507 when the file is full, 503 while
  // another program holds its lock.
  HttpResponse Suggest(const RequestFields& fields,
                       const std::string& api_key) const;
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
  const FileTranslation files_;     // /translate_file and /download_file.
  // Null without options_.suggestions_db.
  const std::unique_ptr<SuggestionStore> suggestions_;
  // Mutable: handing it work is not a change of the API's state. Last, so
  // that it finishes its requests while the rest is still there.
  mutable FairPool parsing_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_LIBRETRANSLATE_API_H_
