#include "server/translation_server.h"

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/decoding/translator.h"
#include "common/model/device.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "server/request_batcher.h"
#include "server/server_metrics.h"
#include "server/tls_files.h"
#include "server/translation_service.h"
#include "server/translator_decode_engine.h"

namespace fanyi {
namespace {

// The /metrics HTTP server (civetweb) gives each connection a thread of its
// own while it reads the request, so a client that connects and sends
// nothing, or sends a byte now and then, holds a thread. With civetweb's
// default of 2 threads, two idle connections kept scrapes waiting for its
// 30 s read timeout. Threads are cheap next to a scrape lost to an alert;
// the shorter read timeout gives back those held by silent clients.
constexpr int kMetricsThreads = 16;
constexpr int kMetricsRequestTimeoutMs = 10000;

// After draining, how long new RPCs keep getting UNAVAILABLE before the gRPC
// server shuts down (see Shutdown).
constexpr std::chrono::milliseconds kLameDuck(500);

// Validates the options that are not checked by the Translator or the
// batcher.
void ValidateOptions(const ServerOptions& options) {
  if (options.model_dir.empty()) {
    throw std::invalid_argument("model_dir is required");
  }
  if (options.listen.empty()) {
    throw std::invalid_argument("listen address is empty");
  }
  if (options.metrics_listen.empty()) {
    throw std::invalid_argument("metrics_listen address is empty");
  }
  if (options.max_batch_delay_ms < 0) {
    throw std::invalid_argument("max_batch_delay_ms must not be negative");
  }
  if (options.max_input_chars < 1) {
    throw std::invalid_argument("max_input_chars must be at least 1");
  }
  if (options.max_request_sentences < 1) {
    throw std::invalid_argument("max_request_sentences must be at least 1");
  }
  if (options.max_glossary_entries < 0) {
    throw std::invalid_argument("max_glossary_entries must not be negative");
  }
  if (options.beam_size < 1 || options.max_beam_size < options.beam_size) {
    throw std::invalid_argument(
        "beam_size must be at least 1 and at most max_beam_size");
  }
  if (options.max_beam_size > options.max_batch_size) {
    throw std::invalid_argument(
        "max_beam_size must be at most max_batch_size (a beam search text "
        "takes beam_size rows of a batch)");
  }
  if (options.max_batch_texts < 1) {
    throw std::invalid_argument("max_batch_texts must be at least 1");
  }
  if (options.threads < 0) {
    throw std::invalid_argument("threads must not be negative");
  }
  if (options.workers < 0) {
    throw std::invalid_argument("workers must not be negative");
  }
  if (options.max_message_bytes < 1) {
    throw std::invalid_argument("max_message_bytes must be at least 1");
  }
}

TlsFiles ServerTlsFiles(const ServerOptions& options) {
  TlsFiles files;
  files.cert = options.tls_cert;
  files.key = options.tls_key;
  files.ca = options.tls_client_ca;
  return files;
}

}  // namespace

TranslationServer::TranslationServer() = default;

TranslationServer::~TranslationServer() { Shutdown(); }

std::unique_ptr<TranslationServer> TranslationServer::Start(
    const ServerOptions& options) {
  ValidateOptions(options);
  // TLS files are checked before the model loads: a typo fails fast.
  std::shared_ptr<grpc::ServerCredentials> credentials =
      MakeServerCredentials(ServerTlsFiles(options));
  std::unique_ptr<TranslationServer> server(new TranslationServer());
  server->LoadModel(options);
  server->StartMetrics(options);

  BatcherOptions batcher_options;
  batcher_options.max_batch_size = options.max_batch_size;
  batcher_options.max_batch_delay =
      std::chrono::milliseconds(options.max_batch_delay_ms);
  batcher_options.max_queue = options.max_queue;
  // One engine per worker: each has its own rows and cache, all read the
  // one model.
  std::vector<DecodeEngine*> engines;
  for (int i = 0; i < server->workers_; ++i) {
    server->engines_.push_back(
        std::make_unique<TranslatorDecodeEngine>(*server->translator_));
    engines.push_back(server->engines_.back().get());
  }
  TranslationServer* const self = server.get();
  server->batcher_ = std::make_unique<RequestBatcher>(
      batcher_options, engines, server->metrics_.get(),
      [self] { self->MarkEngineBroken(); });

  server->StartGrpc(options, std::move(credentials));
  return server;
}

void TranslationServer::LoadModel(const ServerOptions& options) {
  TranslatorOptions translator_options;
  translator_options.device = options.device;
  // Several single-threaded workers decode more per second on CPU than one
  // worker with as many intra-op threads: a decoding step is many small
  // operations, and each parallel region costs thread wake-ups
  // (docs/benchmarks.md). A GPU runs one worker; its threads only feed it.
  const int threads =
      options.threads > 0
          ? options.threads
          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const bool on_gpu = ResolveDevice(options.device).is_cuda();
  workers_ = options.workers > 0 ? options.workers : (on_gpu ? 1 : threads);
  threads_per_worker_ = std::max(1, threads / workers_);
  translator_options.threads = threads_per_worker_;
  translator_options.max_sentence_tokens = options.max_sentence_tokens;
  translator_options.cpu_decoder = options.cpu_decoder;
  translator_options.compute_type = options.compute_type;
  translator_options.beam_stops_early = options.beam_stops_early;
  try {
    translator_ = Translator::Load(options.model_dir, translator_options);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot load model from " + options.model_dir +
                             ": " + e.what());
  }
}

void TranslationServer::StartMetrics(const ServerOptions& options) {
  registry_ = std::make_shared<prometheus::Registry>();
  metrics_ = std::make_unique<ServerMetrics>(*registry_);
  metrics_->SetModelInfo(translator_->model_version(),
                         translator_->device_name());
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", options.metrics_listen, "num_threads",
        std::to_string(kMetricsThreads), "request_timeout_ms",
        std::to_string(kMetricsRequestTimeoutMs)});
  } catch (const std::exception& e) {
    // civetweb reports thread start failures as binding failures too; see
    // server/thread_stack_floor.cc.
    throw std::runtime_error("cannot serve metrics on " +
                             options.metrics_listen + ": " + e.what());
  }
  exposer_->RegisterCollectable(registry_);
  const std::vector<int> ports = exposer_->GetListeningPorts();
  metrics_port_ = ports.empty() ? 0 : ports.front();
}

void TranslationServer::StartGrpc(
    const ServerOptions& options,
    std::shared_ptr<grpc::ServerCredentials> credentials) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();

  ServiceOptions service_options;
  service_options.max_input_chars = options.max_input_chars;
  service_options.max_glossary_entries = options.max_glossary_entries;
  // A request's sentences are queued whole, so more than the queue holds
  // could never be: they are refused as too many instead.
  service_options.max_request_sentences =
      std::min(options.max_request_sentences, options.max_queue);
  service_options.max_batch_texts =
      std::min(options.max_batch_texts, service_options.max_request_sentences);
  service_options.default_beam_size = options.beam_size;
  service_options.max_beam_size = options.max_beam_size;
  service_ = std::make_unique<TranslationService>(service_options, *translator_,
                                                  *batcher_, *metrics_);

  grpc::ServerBuilder builder;
  // Without this a second server could share the port silently (gRPC sets
  // SO_REUSEPORT by default); a port in use must be a start-up error.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.AddListeningPort(options.listen, std::move(credentials), &grpc_port_);
  builder.RegisterService(service_.get());
  std::unique_ptr<grpc::Server> grpc_server = builder.BuildAndStart();
  if (grpc_server == nullptr || grpc_port_ == 0) {
    throw std::runtime_error("cannot listen for gRPC on " + options.listen +
                             " (address invalid or already in use)");
  }
  std::lock_guard<std::mutex> lock(health_mutex_);
  grpc_server_ = std::move(grpc_server);
  grpc_server_->GetHealthCheckService()->SetServingStatus(!engine_broken_);
}

void TranslationServer::MarkEngineBroken() {
  std::lock_guard<std::mutex> lock(health_mutex_);
  engine_broken_ = true;
  if (grpc_server_ != nullptr) {
    grpc_server_->GetHealthCheckService()->SetServingStatus(false);
  }
}

const std::string& TranslationServer::model_version() const {
  return translator_->model_version();
}

std::string TranslationServer::device_name() const {
  return translator_->device_name();
}

void TranslationServer::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    {
      std::lock_guard<std::mutex> lock(health_mutex_);
      if (grpc_server_ != nullptr) {
        grpc_server_->GetHealthCheckService()->SetServingStatus(false);
      }
    }
    // Drain first: from here on new translation RPCs get UNAVAILABLE from
    // the batcher, while everything already queued is decoded and answered.
    if (batcher_ != nullptr) batcher_->Stop();
    // Then stay a lame duck for a moment: RPCs that arrive once gRPC has
    // begun shutting down are cancelled (CANCELLED, which clients do not
    // retry) instead of refused with UNAVAILABLE (which they do). In
    // tests/fault_test.cc's SIGTERM test on a loaded machine, requests sent
    // right after the drain came back CANCELLED in 2 of 8 runs without this
    // pause, in none of 12 with it.
    if (grpc_server_ != nullptr) std::this_thread::sleep_for(kLameDuck);
    // Every RPC has been finished by now, so this returns promptly; the
    // deadline only bounds health or reflection calls still open.
    if (grpc_server_ != nullptr) {
      grpc_server_->Shutdown(std::chrono::system_clock::now() +
                             std::chrono::seconds(5));
      grpc_server_->Wait();
    }
  });
}

}  // namespace fanyi
