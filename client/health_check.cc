#include "client/health_check.h"

#include <vector>

#include "absl/status/status.h"
#include "grpcpp/generic/generic_stub.h"

namespace fanyi {

std::string HealthStatus(const std::shared_ptr<grpc::Channel>& channel,
                         std::chrono::milliseconds timeout,
                         const std::string& service) {
  // By hand: Debian ships no generated health stubs. HealthCheckRequest's
  // field 1 is the service (tag 0x0a, a varint length, the bytes; nothing
  // for ""); the response's field 1 is the status.
  std::string encoded;
  if (!service.empty()) {
    encoded += '\x0a';
    for (std::size_t length = service.size();; length >>= 7) {
      const bool more = length >= 0x80;
      encoded += static_cast<char>((length & 0x7f) | (more ? 0x80 : 0));
      if (!more) break;
    }
    encoded += service;
  }
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  grpc::Slice slice(encoded);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::CompletionQueue queue;
  std::unique_ptr<grpc::GenericClientAsyncResponseReader> call =
      stub.PrepareUnaryCall(&context, "/grpc.health.v1.Health/Check", request,
                            &queue);
  call->StartCall();
  grpc::Status status;
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag = nullptr;
  bool ok = false;
  queue.Next(&tag, &ok);
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  if (!status.ok()) {
    // gRPC's status codes are numbered like absl's.
    return "RPC failed: " +
           absl::StatusCodeToString(
               static_cast<absl::StatusCode>(status.error_code())) +
           ": " + status.error_message();
  }
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return "unreadable response";
  std::string bytes;
  for (const grpc::Slice& slice : slices) {
    bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  // ServingStatus: UNKNOWN = 0 (encoded as no field), SERVING = 1,
  // NOT_SERVING = 2, SERVICE_UNKNOWN = 3.
  if (bytes.empty()) return "UNKNOWN";
  if (bytes.size() == 2 && bytes[0] == '\x08') {
    switch (bytes[1]) {
      case 1:
        return "SERVING";
      case 2:
        return "NOT_SERVING";
      case 3:
        return "SERVICE_UNKNOWN";
    }
  }
  return "unexpected response bytes";
}

}  // namespace fanyi
