#ifndef FANYI_SERVER_SERVER_OPTIONS_H_
#define FANYI_SERVER_SERVER_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace fanyi {

class DecodeEngine;
struct ModelSettings;
class Translator;

// Settings for a TranslationServer, validated by TranslationServer::Start
// (Validate).
struct ServerOptions {
  // What to serve, one of the two: a checkpoint directory (or a training
  // output directory, whose best/ is served) ...
  std::string model_dir;
  // ... or a model repository (server/model_repository.h): DIR/NAME/VERSION/
  // checkpoints, one model per NAME, the highest VERSION served, polled for
  // new versions every repository_poll_ms (0: loaded once).
  std::string model_repository;
  int repository_poll_ms = 5000;
  // Where the model repository's events go (loaded, refused, unloaded), one
  // line each; empty: standard error.
  std::function<void(const std::string& line)> log;
  std::string listen = "127.0.0.1:50051";  // gRPC address; port 0 picks one.
  std::string metrics_listen = "127.0.0.1:9464";  // Prometheus /metrics
                                                  // address; port 0 picks one.
  int max_batch_size = 64;     // Rows decoding at once per worker, at most
                               // (a beam search text takes beam_size rows).
  int max_batch_delay_ms = 0;  // While nothing decodes, how long the oldest
                               // queued sentence waits for others to start with
                               // it; decoding rows admit texts at once.
  int max_queue = 1024;        // Queued sentences and clauses beyond
                               // this get RESOURCE_EXHAUSTED.
  int max_input_chars = 20000;      // Longer texts get INVALID_ARGUMENT.
  int max_request_sentences = 512;  // Sentences and clauses per request, at
                                    // most (and at most max_queue).
  int max_glossary_entries = 256;   // Glossary terms per request, at most.
  int max_document_depth = 256;     // Documents (HTML, .docx) whose elements
                                    // nest deeper get INVALID_ARGUMENT.
  int max_sentence_tokens = 0;  // Longer sentences are translated in clauses;
                                // 0 = what the model does well.
  std::string cpu_decoder = "packed";  // The CPU decoding step: "packed"
                                       // or "libtorch" (TranslatorOptions).
  std::string compute_type = "int8";   // "int8" or "float32"
                                       // (TranslatorOptions).
  bool beam_stops_early = false;       // DecodingOptions::beam_stops_early.
  bool output_guard = true;            // TranslatorOptions::output_guard.
  // GNMT α of beam search for every model; unset: each model's own.
  std::optional<double> length_penalty;
  bool cuda_graphs = true;      // DecodingOptions::cuda_graphs.
  int64_t device_steps = 0;     // TranslatorOptions::device_steps.
  int max_batch_texts = 256;    // Texts per request (TranslateBatch, HTTP
                                // q), at most (and at most max_queue).
  int beam_size = 4;            // Beam for requests that ask for none (0).
  int max_beam_size = 8;        // Larger requested beams are capped.
  int threads = 0;              // CPU threads for decoding, split evenly
                                // over the workers (intra-op threads each);
                                // 0 = one per core.
  int workers = 0;              // Decode workers per served model, each with
                                // its own rows, sharing the model and its
                                // queue; 0 = auto: one per thread on CPU,
                                // one on a GPU.
  std::string device = "auto";  // "auto" (cuda when available), "cpu",
                                // "cuda".
  int assembly_threads = 2;     // Threads that assemble translations and
                                // answer RPCs, off the decode workers.
  int max_message_bytes = 4 << 20;  // Larger gRPC requests are refused with
                                    // RESOURCE_EXHAUSTED before parsing.
  // LibreTranslate's HTTP API (server/http/): its address, HOST:PORT (port
  // 0 picks one); empty: no HTTP (fanyi-server's flag defaults to
  // 127.0.0.1:5000, LibreTranslate's port on this host only, as
  // LibreTranslate's own default; the images listen on 0.0.0.0).
  std::string http_listen;
  int http_threads = 2;                 // Threads running HTTP connections.
  int http_parsing_threads = 4;         // Threads reading HTTP bodies and their
                                        // documents, off the connection threads
                                        // (a client on one at a time).
  int http_max_connections = 4096;      // Open HTTP connections, at most.
  int http_request_timeout_ms = 10000;  // A request must arrive within this.
  int http_max_body_bytes = 1 << 20;    // Larger HTTP bodies get 413.
  // A file of API keys, one per line (# comments); when set, every HTTP
  // request to /translate, /detect, /translate_file and /suggest needs one
  // in `api_key` (403 without).
  std::string api_keys_file;
  // A SQLite file of API keys with their own limits, in LibreTranslate's
  // layout (its api_keys.db will do; created when missing; fanyi-keys
  // manages it while the server runs). A key it lacks gets 403; a request
  // without one is served at the defaults, unless require_api_key (400).
  std::string api_keys_db;
  bool require_api_key = false;
  // HTTP requests per minute, and characters per day, per client (its API
  // key, else its address), unless its key says otherwise; more get 429.
  // 0: no limit.
  int http_requests_per_minute = 0;
  int64_t http_chars_per_day = 0;
  // HTTP requests an hour and a day per client at the default requests a
  // minute (a key with its own limit keeps to that alone); 0: no limit.
  int64_t http_requests_per_hour = 0;
  int64_t http_requests_per_day = 0;
  // An address refused by those limits this many times gets 403 until
  // they are forgiven, one each 10 minutes (LibreTranslate's
  // --req-flood-threshold); 0: never.
  int64_t http_ban_after = 0;
  // redis://HOST[:PORT][/DB]: those limits' counters kept in Redis, shared
  // by every replica; while it does not answer, each replica counts its
  // own (logged, and fanyi_http_limits_redis_up 0). Empty: per process.
  std::string redis_url;
  // Translations kept to answer the same text asked the same way again
  // (the same model and version, options and text), least recently used
  // out first, within this many bytes; 0: no cache.
  int64_t cache_bytes = 0;
  // How long the web page waits after typing before it translates.
  int http_frontend_timeout_ms = 500;
  // The path a proxy serves the HTTP API and page under ("/fanyi"; empty:
  // the root); LibreTranslateOptions::url_prefix.
  std::string url_prefix;
  // Take HTTP clients' addresses from X-Forwarded-For or Forwarded when
  // their connection comes from one of trusted_proxies (CIDR ranges).
  bool trust_forwarded_for = false;
  std::string trusted_proxies = "127.0.0.0/8,::1";
  // The header they write it into: "x-forwarded-for" or "forwarded".
  std::string forwarded_header = "x-forwarded-for";
  // How long a file translated by HTTP /translate_file waits for its
  // download (it is removed once downloaded).
  int http_file_ttl_s = 600;
  // What those files may take in all (503 beyond), and one client's (its
  // API key's, else its address's; 429 beyond).
  int64_t http_file_store_bytes = int64_t{256} << 20;
  int64_t http_file_store_client_bytes = int64_t{32} << 20;
  // The program that reads uploaded .pdf files in a process of its own
  // (fanyi-pdf-text), and the CPU seconds and MiB each reading may take;
  // empty: read in this process (tests, tools), with no limit on time.
  std::string pdf_reader;
  int pdf_cpu_seconds = 20;
  int pdf_memory_mb = 1024;
  // The SQLite file HTTP /suggest stores users' suggestions in (empty:
  // /suggest answers 403), how many it may hold and the bytes it may take
  // (507 beyond).
  std::string suggestions_db;
  int64_t max_suggestions = 1000000;
  int64_t max_suggestions_bytes = int64_t{1} << 30;
  // TLS on the gRPC port: PEM files, all empty for plaintext (the default).
  std::string tls_cert;       // Server certificate chain; needs tls_key.
  std::string tls_key;        // Its private key.
  std::string tls_client_ca;  // When set, clients must present a
                              // certificate signed by this CA.
  // Builds each decode worker's engine on its loaded model; empty: the
  // TranslatorDecodeEngine. A seam for other engines, and for tests that
  // make one fail.
  std::function<std::unique_ptr<DecodeEngine>(const Translator& translator)>
      engine_factory;

  // Throws std::invalid_argument naming the first setting out of its range
  // (those the Translator and the batcher do not check themselves).
  void Validate() const;
};

// What each model `options` serves gets: `workers` decode workers of
// `threads_per_worker` threads each, the decoding and batching settings and
// the request limits (the server's limits: ModelRegistry carries them too).
ModelSettings ServedModelSettings(const ServerOptions& options, int workers,
                                  int threads_per_worker);

}  // namespace fanyi

#endif  // FANYI_SERVER_SERVER_OPTIONS_H_
