#ifndef FANYI_SERVER_TRANSLATION_SERVER_H_
#define FANYI_SERVER_TRANSLATION_SERVER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "server/server_options.h"

namespace grpc {
class Server;
class ServerCredentials;
}  // namespace grpc
namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace fanyi {

class AssemblyPool;
class DecodeEngine;
class HttpMetrics;
class HttpServer;
class LibreTranslateApi;
class ModelRegistry;
class ModelRepository;
class ServerMetrics;
class TranslationCache;
class TranslationService;
class Translator;

// The translation server: the served models (each with its request queue
// and decode workers), the gRPC server (fanyi.v1.Translator, grpc.health.v1
// and reflection), LibreTranslate's HTTP API on the same models, and the
// Prometheus endpoint, started together and shut down in order. Health
// (grpc.health.v1, HTTP /health) is per model, with the model's name as the
// service: a model serves while one of its decode workers does. The server
// as a whole (service "") serves while one model does.
class TranslationServer {
 public:
  // Loads the models and starts serving. Throws std::invalid_argument for
  // invalid options and std::runtime_error naming the problem when a TLS
  // file is unusable, a model cannot be loaded or an address cannot be
  // bound.
  static std::unique_ptr<TranslationServer> Start(const ServerOptions& options);
  // Shuts down if that has not happened yet.
  ~TranslationServer();

  TranslationServer(const TranslationServer&) = delete;
  TranslationServer& operator=(const TranslationServer&) = delete;

  // Ports actually bound (useful with port 0).
  int grpc_port() const { return grpc_port_; }
  int metrics_port() const { return metrics_port_; }
  int http_port() const { return http_port_; }  // 0 without HTTP.
  // The served models now, as "name version (checkpoint) on device", one
  // per model.
  std::vector<std::string> DescribeModels() const;
  // The first served model's checkpoint identifier (with one model: its).
  std::string model_version() const;
  // Decode workers per model and the intra-op threads of each.
  int workers() const { return workers_; }
  int threads_per_worker() const { return threads_per_worker_; }

  // Graceful shutdown: new translation RPCs get UNAVAILABLE, queued and
  // in-flight ones finish, new RPCs go on getting UNAVAILABLE for another
  // half second, then the gRPC server stops. Returns when done.
  // Idempotent and thread-safe. The metrics endpoint stays up until the
  // server is destroyed.
  void Shutdown();

 private:
  TranslationServer();
  // Start's steps.
  void StartMetrics(const ServerOptions& options);
  void LoadModels(const ServerOptions& options);
  void StartGrpc(const ServerOptions& options,
                 std::shared_ptr<grpc::ServerCredentials> credentials);
  void StartHttp(const ServerOptions& options);
  // Whether the server serves: for HTTP's /health.
  bool Serving();
  // Sets each model's health and the server's from the models served now:
  // after a model version came or went, a decode worker stopped for good
  // (on its thread), or shutdown began.
  void UpdateHealth();

  // Declared in dependency order: each member is destroyed before the ones
  // it uses.
  std::unique_ptr<AssemblyPool> assembly_;  // Used by models and service.
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<TranslationCache> cache_;  // With cache_bytes.
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<ModelRegistry> models_;
  std::unique_ptr<ModelRepository> repository_;  // With model_repository.
  std::unique_ptr<TranslationService> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<HttpMetrics> http_metrics_;
  std::unique_ptr<LibreTranslateApi> http_api_;
  std::unique_ptr<HttpServer> http_server_;
  int grpc_port_ = 0;
  int http_port_ = 0;
  int metrics_port_ = 0;
  int workers_ = 1;
  int threads_per_worker_ = 1;

  // Guards the members below and health updates.
  std::mutex health_mutex_;
  bool serving_ = false;  // Some model serves (service "").
  bool shutting_down_ = false;
  std::set<std::string> health_services_;  // Every model name reported.

  std::once_flag shutdown_once_;  // Makes Shutdown's work happen once.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_TRANSLATION_SERVER_H_
