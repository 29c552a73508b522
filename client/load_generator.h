#ifndef FANYI_CLIENT_LOAD_GENERATOR_H_
#define FANYI_CLIENT_LOAD_GENERATOR_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client/http_transport.h"
#include "client/load_report.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/tls_files.h"

namespace fanyi {

// Settings for a LoadGenerator, validated by its constructor. A run is always
// bounded: by `requests`, by `duration_s`, or by both (whichever comes first),
// and never issues requests for longer than kMaxDurationS.
struct LoadOptions {
  // Hard limits that no option can exceed.
  static constexpr double kMaxDurationS = 3600;  // Longest issuing phase.
  static constexpr int kMaxInFlight = 10000;     // Most requests in flight.

  std::string server;  // Required: "host:port" of the fanyi-server to load.
                       // Only this address is ever contacted.
  std::vector<std::string> texts;  // Required: source texts, sent in order and
                                   // cycled; each must be non-empty.
  int concurrency = 8;      // Closed loop: requests kept in flight. Also the
                            // concurrency of the warmup phase.
  int64_t requests = 1000;  // Measured requests to send; 0 = no count limit
                            // (then duration_s must be set).
  double duration_s = 0;    // Stop issuing after this many seconds; 0 = no
                            // time limit other than kMaxDurationS.
  double rate = 0;  // Open loop when > 0: offered load in requests/s with
                    // Poisson arrivals (exponential gaps), sent on schedule
                    // whatever the responses do. 0 = closed loop.
  int max_in_flight = kMaxInFlight;  // Open loop safety cap: a request due
                                     // while this many are in flight waits
                                     // for one to finish.
  uint64_t seed = 1;                 // Seeds the open loop's arrival times.
  int beam_size = 0;                 // Per request; 0 = the server's default.
  // The served model every request names (fanyi.v1.ModelChoice); empty
  // fields name nothing (a server with one model needs none).
  std::string source_language;
  std::string target_language;
  int timeout_ms = 10000;         // Deadline of each request.
  int64_t warmup_requests = 0;    // Sent (closed loop) before the measured
                                  // phase and left out of the report.
  int sentences_per_request = 1;  // Each request's text joins this many
                                  // consecutive texts with a space: a
                                  // document, when the texts are sentences.
  bool bursts = false;  // Closed loop in bursts: `concurrency` requests sent
                        // together, the next burst once the last of them
                        // has finished. requests and warmup_requests must
                        // then be multiples of concurrency.
  // What the texts are: "text" or "html" (TranslateRequest.format).
  std::string format = "text";
  // LibreTranslate's POST /translate (JSON, kept-alive connections, one per
  // request in flight) on `server` instead of gRPC; needs source_language
  // and target_language. Plaintext only.
  bool http = false;
  bool use_tls = false;  // TLS even without files (system root certificates).
  TlsFiles tls;          // TLS files (ca, client cert and key); any given
                         // file implies TLS. All empty: plaintext.
};

// Source texts from a file: one per line; of a tab-separated line (a corpus
// like dev.tsv) only the part before the first tab. Blank lines are skipped.
// Throws std::runtime_error if the file cannot be read or has no text.
std::vector<std::string> ReadSourceTexts(const std::string& path);

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
  LoadReport BuildReport();

  const LoadOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Translator::Stub> stub_;
  // Created by Run, shut down and drained before Run returns.
  std::unique_ptr<grpc::CompletionQueue> completion_queue_;
  std::unique_ptr<HttpTransport> http_;  // Created by Run, for `http`.
  int64_t next_text_ = 0;  // Index of the next text; issuing thread only.

  // The measured phase's issuing, written and read by the issuing thread
  // only (RunPhase, ReserveSlot, BuildReport).
  Clock::time_point measure_start_;
  Clock::time_point issue_end_;
  int64_t requests_sent_ = 0;
  int64_t max_in_flight_waits_ = 0;

  std::mutex mutex_;
  std::condition_variable call_finished_;  // Notified after each completion.
  // Guarded by mutex_: written by the polling thread, read by the issuer.
  int in_flight_ = 0;
  Clock::time_point last_completion_;
  std::vector<double> ok_latencies_ms_;
  std::map<grpc::StatusCode, int64_t> status_counts_;
  std::map<grpc::StatusCode, double> status_max_latency_ms_;
  int64_t sentences_ = 0;
  int64_t generated_tokens_ = 0;
  int64_t requests_completed_ = 0;
  Clock::time_point burst_start_;  // Bursts: when the current one started.
  bool burst_failed_ = false;      // A request of the current burst failed.
  std::vector<double> ok_burst_latencies_ms_;
};

}  // namespace fanyi

#endif  // FANYI_CLIENT_LOAD_GENERATOR_H_
