// fanyi-server: serves translation over gRPC, one model or a repository of
// models (one per language pair).
//
// Defines its flags with absl; includes no torch header (torch declares
// glog/gflags globals that would clash).

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/model/cpu_threading.h"
#include "common/model/process_memory.h"
#include "server/translation_server.h"

ABSL_FLAG(std::string, model_dir, "",
          "Checkpoint directory to serve (or a training output directory, "
          "whose best/ is served).");
ABSL_FLAG(std::string, model_repository, "",
          "Instead of --model_dir: a model repository, DIR/NAME/VERSION/ "
          "checkpoints (en-zh/1/, zh-en/1/); each model's highest version "
          "is served, and new versions are loaded as they appear.");
ABSL_FLAG(int, repository_poll_ms, 5000,
          "How often the model repository is checked for new versions, in "
          "milliseconds (0: never).");
ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC listen address; port 0 picks a free port.");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics address; port 0 picks a free port.");
ABSL_FLAG(int, max_batch_size, 64,
          "Rows decoding at once per worker, at most (a greedy text takes "
          "one row, a beam search text beam_size rows).");
ABSL_FLAG(
    int, max_batch_delay_ms, 0,
    "While nothing is decoding, how long the oldest queued sentence waits "
    "for others to start with it (0: starts at once); while rows "
    "decode, texts join them at the next step.");
ABSL_FLAG(int, max_queue, 1024,
          "Queued sentences and clauses (the parts texts are cut into) "
          "beyond this are rejected with RESOURCE_EXHAUSTED.");
ABSL_FLAG(int, max_input_chars, 20000,
          "Texts with more characters are rejected (checked before the text "
          "is read further).");
ABSL_FLAG(int, max_document_depth, 256,
          "Documents (HTML, .docx) whose elements nest deeper are rejected.");
ABSL_FLAG(int, max_request_sentences, 512,
          "Sentences (and clauses of long sentences) per request, over all "
          "its texts; more are rejected.");
ABSL_FLAG(int, max_sentence_tokens, 0,
          "Sentences with more source tokens are translated clause by clause "
          "(0: the model's longest training sentence, within its length "
          "caps).");
ABSL_FLAG(bool, beam_stops_early, false,
          "Beam search: end a sentence once beam_size hypotheses ended (as "
          "CTranslate2 and fairseq; faster, 0.2 BLEU lower on dev) instead "
          "of once no live beam can beat them.");
ABSL_FLAG(bool, output_guard, true,
          "Decode again, with a beam that repeats no 3-gram, each sentence "
          "whose translation is broken (a loop, a length far outside the "
          "model's training pairs', the source copied through), and keep "
          "the better (fanyi_broken_outputs_total counts them either way).");
ABSL_FLAG(bool, cuda_graphs, true,
          "On a GPU, replay the decoding step from CUDA graphs while a batch "
          "keeps its rows (the same translations, one launch a step; 1.2x to "
          "2.6x the throughput on an H100, more GPU memory: "
          "docs/benchmarks.md).");
ABSL_FLAG(int64_t, device_steps, 0,
          "On a GPU, batches of greedy sentences or of beam searches run up "
          "to this many steps (at most 64) between reads, choosing tokens "
          "and beams on the device (0: read at every step); sentences join "
          "and leave between such windows. Ignored on the CPU. Not yet "
          "measured on a GPU: docs/benchmarks.md.");
ABSL_FLAG(std::string, cpu_decoder, "packed",
          "The decoding step on the CPU: packed (packed weights, fused "
          "kernels) or libtorch (the model's own step, the reference).");
ABSL_FLAG(std::string, compute_type, "int8",
          "The decoding step's arithmetic: on the CPU, int8 (weights per "
          "output feature, inputs per row; as good on dev, docs/quality.md) "
          "or float32 in the packed step, float32 or bfloat16 in "
          "--cpu_decoder libtorch; on a GPU float32 (int8 too), float16 or "
          "bfloat16 (half-precision weights, caches and activations).");
ABSL_FLAG(int, max_glossary_entries, 256,
          "Glossary and do-not-translate terms per request, at most.");
ABSL_FLAG(int, beam_size, 4,
          "Beam size for requests that ask for none (1 = greedy).");
ABSL_FLAG(int, max_beam_size, 8, "Larger requested beam sizes are capped.");
ABSL_FLAG(double, length_penalty, -1,
          "GNMT length penalty α of beam search; negative: each model's own "
          "(chosen on dev by fanyi-train, 1.0 for older models).");
ABSL_FLAG(int, threads, fanyi::CoresGiven(),
          "CPU threads for decoding, split evenly over the workers "
          "(default: the cores the process is given).");
ABSL_FLAG(int, workers, 0,
          "Decode workers sharing the model and the queue, each with its own "
          "rows (0 = one per thread on CPU, one on a GPU).");
ABSL_FLAG(std::string, device, "auto", "auto, cpu or cuda.");
ABSL_FLAG(int, assembly_threads, 2,
          "Threads that assemble finished translations (detokenizing, "
          "script conversion, spans restored) and answer the RPCs, so that "
          "decode workers only decode.");
ABSL_FLAG(int, max_message_bytes, 4 << 20,
          "Larger gRPC requests are refused with RESOURCE_EXHAUSTED.");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate chain: serve gRPC over TLS (with --tls_key). "
          "Default: plaintext.");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert.");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate: clients must present a certificate it "
          "signed.");
ABSL_FLAG(std::string, http_listen, "127.0.0.1:5000",
          "HTTP address of LibreTranslate's API (POST /translate, "
          "/languages, /health, ...); empty: no HTTP.");
ABSL_FLAG(int, http_threads, 2, "Threads running the HTTP connections.");
ABSL_FLAG(int, http_parsing_threads, 4,
          "Threads that read HTTP request bodies and their documents, off the "
          "connection threads; each client (address) on one at a time.");
ABSL_FLAG(int, http_max_connections, 4096,
          "Open HTTP connections, at most; more are closed at once.");
ABSL_FLAG(int, http_request_timeout_ms, 10000,
          "An HTTP request (head and body) must arrive within this; slower "
          "or idle connections are closed.");
ABSL_FLAG(int, http_max_body_bytes, 1 << 20,
          "Larger HTTP request bodies get 413.");
ABSL_FLAG(int, http_requests_per_minute, 0,
          "HTTP /translate, /detect, /translate_file and /suggest requests "
          "per minute per client (its API key, else its address), unless its "
          "key in --api_keys_db says otherwise; more get 429. 0: no limit.");
ABSL_FLAG(int64_t, http_chars_per_day, 0,
          "Characters per day per client (the texts of HTTP /translate and "
          "/detect, the bytes of a file to translate), unless its key in "
          "--api_keys_db says otherwise; more get 429. 0: no limit.");
ABSL_FLAG(int, http_file_ttl_s, 600,
          "Seconds a file translated by HTTP /translate_file waits for its "
          "download; it is removed once downloaded.");
ABSL_FLAG(int64_t, http_file_store_bytes, int64_t{256} << 20,
          "What the files translated by HTTP /translate_file and waiting for "
          "their download may take in all; beyond it /translate_file answers "
          "503.");
ABSL_FLAG(int64_t, http_file_store_client_bytes, int64_t{32} << 20,
          "What one client's (its API key's, else its address's) waiting "
          "files may take; beyond it that client gets 429.");
ABSL_FLAG(std::string, pdf_reader, "",
          "The program that reads each uploaded .pdf in a process of its own "
          "(empty: fanyi-pdf-text beside this program); none: read them in "
          "this process, with no limit on their time.");
ABSL_FLAG(int, pdf_cpu_seconds, 20,
          "CPU seconds the reading of one .pdf may take; beyond them it is "
          "refused (400).");
ABSL_FLAG(int, pdf_memory_mb, 1024,
          "Memory (MiB of address space) the reading of one .pdf may take.");
ABSL_FLAG(int64_t, http_requests_per_hour, 0,
          "HTTP requests per hour per client at the default requests per "
          "minute (a key with its own limit keeps to that alone); 0: no "
          "limit.");
ABSL_FLAG(int64_t, http_requests_per_day, 0,
          "HTTP requests per day per client, as --http_requests_per_hour; "
          "0: no limit.");
ABSL_FLAG(int64_t, http_ban_after, 0,
          "An address refused by the request and character limits (429) "
          "this many times gets 403 until they are forgiven, one each 10 "
          "minutes, as LibreTranslate's --req-flood-threshold; 0: never.");
ABSL_FLAG(std::string, redis_url, "",
          "redis://HOST[:PORT][/DB] (or redis://:PASSWORD@HOST...): the HTTP "
          "request and character limits' counters kept in Redis, so that "
          "every replica enforces one limit. While Redis does not answer, "
          "each replica counts its own (logged; "
          "fanyi_http_limits_redis_up 0). Empty: counted per process.");
ABSL_FLAG(int, batch_limit, 256,
          "Texts one request may hold, at most: an array q of HTTP "
          "/translate (LibreTranslate's --batch-limit) and gRPC "
          "TranslateBatch's texts (and at most --max_queue).");
ABSL_FLAG(int, frontend_timeout_ms, 500,
          "How long the web page waits after typing before it translates "
          "(/frontend/settings' frontendTimeout, LibreTranslate's "
          "--frontend-timeout).");
ABSL_FLAG(std::string, url_prefix, "",
          "The path a proxy serves the HTTP API and page under (\"/fanyi\"): "
          "requests may come with it or without it, and download addresses "
          "start with it. Empty: the root.");
ABSL_FLAG(int64_t, cache_bytes, 0,
          "Translations kept to answer the same text asked the same way "
          "again (same model and version, options and text), least recently "
          "used out first, within this many bytes; 0: no cache.");
ABSL_FLAG(bool, trust_forwarded_for, false,
          "Take an HTTP client's address from X-Forwarded-For (or Forwarded) "
          "when its connection comes from --trusted_proxies: the nearest "
          "address in the chain that is not a trusted proxy. Clients behind "
          "an ingress then get their own limits.");
ABSL_FLAG(std::string, trusted_proxies, "127.0.0.0/8,::1",
          "The proxies whose forwarded addresses --trust_forwarded_for "
          "believes: IP ranges (CIDR), commas between.");
ABSL_FLAG(std::string, forwarded_header, "x-forwarded-for",
          "The header --trusted_proxies write the client's address into: "
          "x-forwarded-for or forwarded (RFC 7239); the other is never read, "
          "since a client may have sent it.");
ABSL_FLAG(std::string, api_keys_file, "",
          "File of API keys, one per line: every HTTP request to /translate, "
          "/detect, /translate_file and /suggest then needs one in api_key "
          "(403 without).");
ABSL_FLAG(std::string, api_keys_db, "",
          "SQLite file of API keys with their own limits, in LibreTranslate's "
          "layout (its api_keys.db will do; created when missing; manage it "
          "with fanyi-keys while the server runs). A key it lacks gets 403; "
          "a request without a key is served at the default limits, unless "
          "--require_api_key.");
ABSL_FLAG(bool, require_api_key, false,
          "With --api_keys_db: HTTP requests without an API key get 400.");
ABSL_FLAG(std::string, suggestions_db, "",
          "SQLite file that HTTP POST /suggest stores users' suggested "
          "translations in (created when missing; LibreTranslate's "
          "suggestions.db will do), for fanyi-train --suggestions; empty: "
          "/suggest answers 403.");
ABSL_FLAG(int64_t, max_suggestions, 1000000,
          "Suggestions the --suggestions_db file may hold; /suggest answers "
          "507 beyond.");
ABSL_FLAG(int64_t, max_suggestions_bytes, int64_t{1} << 30,
          "Bytes the --suggestions_db file may take; /suggest answers 507 "
          "beyond.");

namespace {

// "host:port" with the port replaced by `port`.
std::string WithPort(const std::string& address, int port) {
  return address.substr(0, address.rfind(':') + 1) + std::to_string(port);
}

// The --pdf_reader program: as given, fanyi-pdf-text in this program's
// folder when empty, none ("") when "none".
std::string PdfReaderPath(const std::string& flag) {
  if (flag == "none") return "";
  if (!flag.empty()) return flag;
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string path(self,
                         length > 0 ? static_cast<std::size_t>(length) : 0);
  return path.substr(0, path.rfind('/') + 1) + "fanyi-pdf-text";
}

}  // namespace

int main(int argc, char** argv) {
  fanyi::EnsureCpuThreadingEnvironment(argv);
  fanyi::KeepFreedMemoryForReuse();
  absl::SetProgramUsageMessage(
      "Serves translation over gRPC and LibreTranslate's HTTP API: one "
      "model, or a repository of models.\n"
      "Usage: fanyi-server --model_dir DIR [--listen HOST:PORT] ...\n"
      "       fanyi-server --model_repository DIR [--listen HOST:PORT] ...");
  absl::ParseCommandLine(argc, argv);

  // Block the shutdown signals before any thread starts so every thread
  // inherits the mask and only sigwait() below receives them.
  sigset_t shutdown_signals;
  sigemptyset(&shutdown_signals);
  sigaddset(&shutdown_signals, SIGTERM);
  sigaddset(&shutdown_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &shutdown_signals, nullptr);

  fanyi::ServerOptions options;
  options.model_dir = absl::GetFlag(FLAGS_model_dir);
  options.model_repository = absl::GetFlag(FLAGS_model_repository);
  options.repository_poll_ms = absl::GetFlag(FLAGS_repository_poll_ms);
  options.listen = absl::GetFlag(FLAGS_listen);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.max_batch_size = absl::GetFlag(FLAGS_max_batch_size);
  options.max_batch_delay_ms = absl::GetFlag(FLAGS_max_batch_delay_ms);
  options.max_queue = absl::GetFlag(FLAGS_max_queue);
  options.max_input_chars = absl::GetFlag(FLAGS_max_input_chars);
  options.max_request_sentences = absl::GetFlag(FLAGS_max_request_sentences);
  options.max_document_depth = absl::GetFlag(FLAGS_max_document_depth);
  options.max_glossary_entries = absl::GetFlag(FLAGS_max_glossary_entries);
  options.max_sentence_tokens = absl::GetFlag(FLAGS_max_sentence_tokens);
  options.cpu_decoder = absl::GetFlag(FLAGS_cpu_decoder);
  options.compute_type = absl::GetFlag(FLAGS_compute_type);
  options.beam_stops_early = absl::GetFlag(FLAGS_beam_stops_early);
  options.output_guard = absl::GetFlag(FLAGS_output_guard);
  options.cuda_graphs = absl::GetFlag(FLAGS_cuda_graphs);
  options.device_steps = absl::GetFlag(FLAGS_device_steps);
  options.beam_size = absl::GetFlag(FLAGS_beam_size);
  options.max_beam_size = absl::GetFlag(FLAGS_max_beam_size);
  if (absl::GetFlag(FLAGS_length_penalty) >= 0) {
    options.length_penalty = absl::GetFlag(FLAGS_length_penalty);
  }
  options.threads = absl::GetFlag(FLAGS_threads);
  options.workers = absl::GetFlag(FLAGS_workers);
  options.device = absl::GetFlag(FLAGS_device);
  options.assembly_threads = absl::GetFlag(FLAGS_assembly_threads);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options.http_listen = absl::GetFlag(FLAGS_http_listen);
  options.http_threads = absl::GetFlag(FLAGS_http_threads);
  options.http_parsing_threads = absl::GetFlag(FLAGS_http_parsing_threads);
  options.http_max_connections = absl::GetFlag(FLAGS_http_max_connections);
  options.http_request_timeout_ms =
      absl::GetFlag(FLAGS_http_request_timeout_ms);
  options.http_max_body_bytes = absl::GetFlag(FLAGS_http_max_body_bytes);
  options.api_keys_file = absl::GetFlag(FLAGS_api_keys_file);
  options.api_keys_db = absl::GetFlag(FLAGS_api_keys_db);
  options.require_api_key = absl::GetFlag(FLAGS_require_api_key);
  options.http_requests_per_minute =
      absl::GetFlag(FLAGS_http_requests_per_minute);
  options.http_chars_per_day = absl::GetFlag(FLAGS_http_chars_per_day);
  options.http_requests_per_hour = absl::GetFlag(FLAGS_http_requests_per_hour);
  options.http_requests_per_day = absl::GetFlag(FLAGS_http_requests_per_day);
  options.http_ban_after = absl::GetFlag(FLAGS_http_ban_after);
  options.redis_url = absl::GetFlag(FLAGS_redis_url);
  options.cache_bytes = absl::GetFlag(FLAGS_cache_bytes);
  options.url_prefix = absl::GetFlag(FLAGS_url_prefix);
  options.max_batch_texts = absl::GetFlag(FLAGS_batch_limit);
  options.http_frontend_timeout_ms = absl::GetFlag(FLAGS_frontend_timeout_ms);
  options.trust_forwarded_for = absl::GetFlag(FLAGS_trust_forwarded_for);
  options.trusted_proxies = absl::GetFlag(FLAGS_trusted_proxies);
  options.forwarded_header = absl::GetFlag(FLAGS_forwarded_header);
  options.http_file_ttl_s = absl::GetFlag(FLAGS_http_file_ttl_s);
  options.http_file_store_bytes = absl::GetFlag(FLAGS_http_file_store_bytes);
  options.http_file_store_client_bytes =
      absl::GetFlag(FLAGS_http_file_store_client_bytes);
  options.pdf_reader = PdfReaderPath(absl::GetFlag(FLAGS_pdf_reader));
  options.pdf_cpu_seconds = absl::GetFlag(FLAGS_pdf_cpu_seconds);
  options.pdf_memory_mb = absl::GetFlag(FLAGS_pdf_memory_mb);
  options.suggestions_db = absl::GetFlag(FLAGS_suggestions_db);
  options.max_suggestions = absl::GetFlag(FLAGS_max_suggestions);
  options.max_suggestions_bytes = absl::GetFlag(FLAGS_max_suggestions_bytes);

  std::unique_ptr<fanyi::TranslationServer> server;
  try {
    server = fanyi::TranslationServer::Start(options);
  } catch (const std::exception& e) {
    std::cerr << "fanyi-server: " << e.what() << std::endl;
    return 1;
  }
  std::string models;
  for (const std::string& model : server->DescribeModels()) {
    models += (models.empty() ? "" : ", ") + model;
  }
  std::cout << "fanyi-server: listening on "
            << WithPort(options.listen, server->grpc_port())
            << ", metrics on http://"
            << WithPort(options.metrics_listen, server->metrics_port())
            << "/metrics, model " << models << ", " << server->workers()
            << " decode worker(s) x " << server->threads_per_worker()
            << " thread(s) per model" << std::endl;
  if (server->http_port() != 0) {
    std::cout << "fanyi-server: LibreTranslate API on http://"
              << WithPort(options.http_listen, server->http_port())
              << std::endl;
  }

  int signal_number = 0;
  sigwait(&shutdown_signals, &signal_number);
  std::cout << "fanyi-server: signal " << signal_number
            << ", draining and shutting down" << std::endl;
  server->Shutdown();
  return 0;
}
