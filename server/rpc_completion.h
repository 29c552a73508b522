#ifndef FANYI_SERVER_RPC_COMPLETION_H_
#define FANYI_SERVER_RPC_COMPLETION_H_

#include <chrono>
#include <functional>
#include <string>

#include "grpcpp/grpcpp.h"
#include "server/server_metrics.h"

namespace fanyi {

// Completes one RPC exactly once: records its metrics (under the model
// chosen, "" before one is), then finishes the reactor. Metrics are
// recorded first so that a client that has its answer also sees it counted.
class RpcCompletion {
 public:
  // `write_response`, when given, writes the response message out before
  // an OK answer (a raw method's): its failure is the answer then.
  RpcCompletion(const char* method, grpc::ServerUnaryReactor* reactor,
                ServerMetrics& metrics,
                std::function<grpc::Status()> write_response = nullptr);

  // The model the RPC chose, for its metrics.
  void set_model(const std::string& model) { model_ = model; }

  // Records the RPC's metrics and finishes it with `status`.
  void Answer(grpc::Status status) const;

 private:
  const char* const method_;
  std::string model_;
  grpc::ServerUnaryReactor* const reactor_;
  ServerMetrics& metrics_;
  const std::function<grpc::Status()> write_response_;
  const std::chrono::steady_clock::time_point start_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_RPC_COMPLETION_H_
