#ifndef FANYI_CLIENT_HEALTH_CHECK_H_
#define FANYI_CLIENT_HEALTH_CHECK_H_

#include <chrono>
#include <memory>
#include <string>

#include "grpcpp/grpcpp.h"

namespace fanyi {

// Asks a server's standard health service (grpc.health.v1.Health/Check)
// over `channel` about `service` (fanyi-server: "" for the whole server, a
// model's name for that model): the status name ("SERVING", "NOT_SERVING",
// "UNKNOWN" or "SERVICE_UNKNOWN"), or the failed call as "RPC failed: CODE:
// message" (NOT_FOUND for a service never reported). It queues behind no
// translation, so a busy server still answers at once.
std::string HealthStatus(const std::shared_ptr<grpc::Channel>& channel,
                         std::chrono::milliseconds timeout,
                         const std::string& service = "");

}  // namespace fanyi

#endif  // FANYI_CLIENT_HEALTH_CHECK_H_
