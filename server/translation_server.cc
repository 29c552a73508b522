#include "server/translation_server.h"

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/model/cpu_threading.h"
#include "common/model/device.h"
#include "common/pipeline/translator.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "server/assembly_pool.h"
#include "server/http/http_metrics.h"
#include "server/http/http_server.h"
#include "server/http/libretranslate_api.h"
#include "server/http/libretranslate_options.h"
#include "server/model_registry.h"
#include "server/model_repository.h"
#include "server/served_model.h"
#include "server/server_metrics.h"
#include "server/tls_files.h"
#include "server/translation_service.h"

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
  options.Validate();
  // TLS files are checked before the models load: a typo fails fast.
  std::shared_ptr<grpc::ServerCredentials> credentials =
      MakeServerCredentials(ServerTlsFiles(options));
  std::unique_ptr<TranslationServer> server(new TranslationServer());
  server->assembly_ = std::make_unique<AssemblyPool>(options.assembly_threads);
  server->StartMetrics(options);
  server->LoadModels(options);
  server->StartGrpc(options, std::move(credentials));
  if (!options.http_listen.empty()) server->StartHttp(options);
  return server;
}

void TranslationServer::LoadModels(const ServerOptions& options) {
  // Several single-threaded workers decode more per second on CPU than one
  // worker with as many intra-op threads: a decoding step is many small
  // operations, and each parallel region costs thread wake-ups
  // (docs/benchmarks.md). A GPU runs one worker; its threads only feed it.
  const int threads = options.threads > 0 ? options.threads : CoresGiven();
  const bool on_gpu = ResolveDevice(options.device).is_cuda();
  if (options.device == "auto" && !on_gpu) {
    // An operator who gave the container a GPU learns here that it is not
    // used (no device visible, or a build without CUDA).
    const std::string line =
        "--device=auto: no CUDA device is visible, decoding on the CPU";
    if (options.log) {
      options.log(line);
    } else {
      std::cerr << "fanyi-server: " << line << std::endl;
    }
  }
  workers_ = options.workers > 0 ? options.workers : (on_gpu ? 1 : threads);
  threads_per_worker_ = std::max(1, threads / workers_);
  ModelSettings settings =
      ServedModelSettings(options, workers_, threads_per_worker_);
  models_ = std::make_unique<ModelRegistry>(settings.translator.limits);
  settings.engine_factory = options.engine_factory;
  TranslationServer* const self = this;
  auto update_health = [self] { self->UpdateHealth(); };
  if (!options.model_repository.empty()) {
    ModelRepository::Log log = options.log;
    if (!log) {
      log = [](const std::string& line) {
        std::cerr << "fanyi-server: " << line << std::endl;
      };
    }
    repository_ = std::make_unique<ModelRepository>(
        options.model_repository, settings,
        std::chrono::milliseconds(options.repository_poll_ms), *models_,
        *metrics_, update_health, std::move(log));
    return;
  }
  // One checkpoint: named for its pair, version 0.
  std::shared_ptr<ServedModel> model = ServedModel::Load(
      "", 0, options.model_dir, settings, *metrics_, update_health);
  models_->Replace(std::move(model));
  UpdateHealth();
}

void TranslationServer::StartMetrics(const ServerOptions& options) {
  registry_ = std::make_shared<prometheus::Registry>();
  metrics_ = std::make_unique<ServerMetrics>(*registry_);
  if (options.cache_bytes > 0) {
    cache_ = std::make_unique<TranslationCache>(
        static_cast<std::size_t>(options.cache_bytes), *registry_);
  }
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

  service_ = std::make_unique<TranslationService>(*models_, *metrics_,
                                                  *assembly_, cache_.get());

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
  {
    std::lock_guard<std::mutex> lock(health_mutex_);
    grpc_server_ = std::move(grpc_server);
  }
  UpdateHealth();
}

void TranslationServer::StartHttp(const ServerOptions& options) {
  LibreTranslateOptions api_options;
  api_options.access.requests_per_minute = options.http_requests_per_minute;
  api_options.access.chars_per_day = options.http_chars_per_day;
  api_options.access.requests_per_hour = options.http_requests_per_hour;
  api_options.access.requests_per_day = options.http_requests_per_day;
  api_options.access.ban_after = options.http_ban_after;
  api_options.access.redis_url = options.redis_url;
  api_options.access.api_keys_db = options.api_keys_db;
  api_options.access.require_api_key = options.require_api_key;
  api_options.trust_forwarded_for = options.trust_forwarded_for;
  api_options.trusted_proxies = options.trusted_proxies;
  api_options.forwarded_header = options.forwarded_header == "forwarded"
                                     ? ForwardedHeader::kForwarded
                                     : ForwardedHeader::kXForwardedFor;
  api_options.parsing_threads = options.http_parsing_threads;
  api_options.file_time_to_live = std::chrono::seconds(options.http_file_ttl_s);
  api_options.max_stored_file_bytes =
      static_cast<std::size_t>(options.http_file_store_bytes);
  api_options.max_client_stored_file_bytes =
      static_cast<std::size_t>(options.http_file_store_client_bytes);
  api_options.pdf_reader = {options.pdf_reader, options.pdf_cpu_seconds,
                            options.pdf_memory_mb};
  if (!options.api_keys_file.empty()) {
    api_options.access.required_keys = ReadApiKeysFile(options.api_keys_file);
  }
  api_options.suggestions_db = options.suggestions_db;
  api_options.cache = cache_.get();
  api_options.frontend_timeout_ms = options.http_frontend_timeout_ms;
  api_options.url_prefix = options.url_prefix;
  api_options.max_suggestions = options.max_suggestions;
  api_options.max_suggestions_bytes = options.max_suggestions_bytes;
  http_metrics_ = std::make_unique<HttpMetrics>(*registry_);
  http_api_ = std::make_unique<LibreTranslateApi>(
      *models_, *assembly_, *http_metrics_, [this] { return Serving(); },
      std::move(api_options));
  HttpServerOptions http;
  http.listen = options.http_listen;
  http.threads = options.http_threads;
  http.max_connections = options.http_max_connections;
  http.request_timeout =
      std::chrono::milliseconds(options.http_request_timeout_ms);
  http.max_body_bytes = static_cast<std::size_t>(options.http_max_body_bytes);
  LibreTranslateApi* const api = http_api_.get();
  HttpMetrics* const metrics = http_metrics_.get();
  http_server_ = std::make_unique<HttpServer>(
      http,
      [api](HttpRequest request, HttpResponder respond) {
        api->Handle(std::move(request), std::move(respond));
      },
      [metrics](int status) { metrics->Record("other", status, 0); },
      [metrics] { metrics->RecordHangUp(); });
  http_port_ = http_server_->port();
}

bool TranslationServer::Serving() {
  std::lock_guard<std::mutex> lock(health_mutex_);
  return serving_;
}

void TranslationServer::UpdateHealth() {
  std::lock_guard<std::mutex> lock(health_mutex_);
  // models_ is null when Start failed before loading the models.
  const std::vector<std::shared_ptr<ServedModel>> models =
      models_ != nullptr ? models_->Models()
                         : std::vector<std::shared_ptr<ServedModel>>();
  grpc::HealthCheckServiceInterface* const health =
      grpc_server_ != nullptr ? grpc_server_->GetHealthCheckService() : nullptr;
  std::set<std::string> gone = health_services_;
  serving_ = false;
  for (const std::shared_ptr<ServedModel>& model : models) {
    const bool serving = !shutting_down_ && model->Serving();
    serving_ = serving_ || serving;
    gone.erase(model->name());
    health_services_.insert(model->name());
    if (health != nullptr) health->SetServingStatus(model->name(), serving);
  }
  // gRPC's health service cannot forget a service: a model no longer
  // served stays NOT_SERVING. (SetServingStatus(bool) would set every
  // service, the models' too.)
  if (health != nullptr) {
    for (const std::string& name : gone) health->SetServingStatus(name, false);
    health->SetServingStatus("", serving_);
  }
}

std::vector<std::string> TranslationServer::DescribeModels() const {
  std::vector<std::string> descriptions;
  for (const std::shared_ptr<ServedModel>& model : models_->Models()) {
    std::ostringstream description;
    description << model->name() << " version " << model->version() << " ("
                << model->translator().model_version() << ") on "
                << model->translator().device_name() << ", beam length penalty "
                << model->translator().length_penalty();
    descriptions.push_back(description.str());
  }
  return descriptions;
}

std::string TranslationServer::model_version() const {
  const std::vector<std::shared_ptr<ServedModel>> models = models_->Models();
  return models.empty() ? "" : models.front()->translator().model_version();
}

void TranslationServer::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    {
      std::lock_guard<std::mutex> lock(health_mutex_);
      shutting_down_ = true;
    }
    UpdateHealth();
    // Drain first: from here on new translation RPCs get UNAVAILABLE from
    // the models' batchers, while everything already queued is decoded and
    // answered. The repository stops loading versions, and drains the
    // versions it has retired.
    repository_.reset();
    if (models_ != nullptr) {
      for (const std::shared_ptr<ServedModel>& model : models_->Models()) {
        model->Stop();
      }
    }
    // HTTP requests being read are handed on (to stopped batchers, which
    // refuse them) and new ones refused.
    if (http_api_ != nullptr) http_api_->Stop();
    // Their last parts have decoded; their answers are being assembled.
    if (assembly_ != nullptr) assembly_->Drain();
    // Their HTTP answers are written; then HTTP stops.
    if (http_server_ != nullptr) http_server_->Stop();
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
