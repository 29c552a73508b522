#ifndef FANYI_CLIENT_LOAD_GENERATOR_H_
#define FANYI_CLIENT_LOAD_GENERATOR_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "client/http_transport.h"
#include "client/load_options.h"
#include "client/load_report.h"
#include "client/load_tally.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace fanyi {

// An asynchronous load generator for fanyi.v1.Translator/Translate, or for
// the HTTP API's POST /translate, to measure a server's throughput and tail
// latency the same way over either. The calling thread issues requests
// (closed or open loop) and one thread completes them: it polls a
// CompletionQueue (gRPC) or runs the connections (HTTP, Boost.Beast).
class LoadGenerator {
 public:
  // Throws std::invalid_argument naming the first invalid option.
  explicit LoadGenerator(LoadOptions options);
  ~LoadGenerator();

  LoadGenerator(const LoadGenerator&) = delete;
  LoadGenerator& operator=(const LoadGenerator&) = delete;

  // Connects, runs the warmup and then the measured phase, waits for every
  // request to finish and reports. Throws std::runtime_error when a TLS
  // file is unusable or the server cannot be reached within timeout_ms.
  // Call once.
  LoadReport Run();

 private:
  struct Call;
  // One phase of the run: what to send and when to stop.
  struct Phase {
    bool measured = false;  // Results go into the report.
    int64_t requests = 0;   // 0 = no count limit.
    double duration_s = LoadOptions::kMaxDurationS;
    double rate = 0;  // > 0: open loop.
  };
  using Clock = std::chrono::steady_clock;

  // The warmup phase, then the measured one.
  void RunPhases();
  // Sends a phase's requests and returns once all of them have completed.
  void RunPhase(const Phase& phase);
  // Blocks until another request may be sent in `phase` (fewer than the
  // concurrency, or in open loop max_in_flight, in flight) and counts it as
  // in flight; false, reserving nothing, when `stop_at` passes first.
  bool ReserveSlot(const Phase& phase, Clock::time_point stop_at);
  // Bursts: blocks until nothing is in flight, then counts a whole burst as
  // in flight and starts its clock; false, reserving nothing, when `stop_at`
  // passes first.
  bool ReserveBurst(Clock::time_point stop_at);
  // Starts one asynchronous Translate call.
  void StartCall(bool measured);
  // The next request's text (sentences_per_request texts joined).
  std::string NextText();
  // The polling thread: records each finished call.
  void PollCompletions();
  void RecordCompletion(std::unique_ptr<Call> call);

  const LoadOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Translator::Stub> stub_;
  // Created by Run, shut down and drained before Run returns.
  std::unique_ptr<grpc::CompletionQueue> completion_queue_;
  std::unique_ptr<HttpTransport> http_;  // Created by Run, for `http`.
  int64_t next_text_ = 0;  // Index of the next text; issuing thread only.
  int64_t max_in_flight_waits_ = 0;  // Measured phase; issuing thread only.

  std::mutex mutex_;
  std::condition_variable call_finished_;  // Notified after each completion.
  // Guarded by mutex_: written by the polling thread, read by the issuer.
  int in_flight_ = 0;
  LoadTally tally_;
};

}  // namespace fanyi

#endif  // FANYI_CLIENT_LOAD_GENERATOR_H_
