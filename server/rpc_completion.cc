#include "server/rpc_completion.h"

#include <utility>

namespace fanyi {

RpcCompletion::RpcCompletion(const char* method,
                             grpc::ServerUnaryReactor* reactor,
                             ServerMetrics& metrics,
                             std::function<grpc::Status()> write_response)
    : method_(method),
      reactor_(reactor),
      metrics_(metrics),
      write_response_(std::move(write_response)),
      start_(std::chrono::steady_clock::now()) {
  metrics_.RequestStarted();
}

void RpcCompletion::Answer(grpc::Status status) const {
  if (status.ok() && write_response_) status = write_response_();
  metrics_.RecordRequest(
      model_, method_, status.error_code(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count());
  metrics_.RequestFinished();
  reactor_->Finish(status);
}

}  // namespace fanyi
