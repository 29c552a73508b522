#ifndef FANYI_CLIENT_LOAD_TALLY_H_
#define FANYI_CLIENT_LOAD_TALLY_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "client/load_options.h"
#include "client/load_report.h"
#include "grpcpp/support/status_code_enum.h"

namespace fanyi {

// What the measured phase of a load run came to: each completed call's
// status, latency and counts, each burst's latency, and what was issued;
// then the LoadReport of them. Not thread-safe: the LoadGenerator's mutex
// guards it.
class LoadTally {
 public:
  using Clock = std::chrono::steady_clock;

  // A burst's calls were all sent at `start` (bursts only).
  void StartBurst(Clock::time_point start);
  // A measured call sent at `sent_at` finished at `done` with `code`; an OK
  // one carried `sentences` and `generated_tokens`. `burst_over`: the last
  // call in flight of a burst has finished.
  void Record(grpc::StatusCode code, Clock::time_point sent_at,
              Clock::time_point done, int64_t sentences,
              int64_t generated_tokens, bool burst_over);
  // The issuing of the measured phase: from `start` to `end`, `sent`
  // requests, `max_in_flight_waits` of them delayed by the open loop's cap.
  void SetIssued(Clock::time_point start, Clock::time_point end, int64_t sent,
                 int64_t max_in_flight_waits);

  // The report of a run with `options`.
  LoadReport Report(const LoadOptions& options) const;

 private:
  Clock::time_point issue_start_;
  Clock::time_point issue_end_;
  int64_t requests_sent_ = 0;
  int64_t max_in_flight_waits_ = 0;
  Clock::time_point last_completion_;
  int64_t requests_completed_ = 0;
  std::vector<double> ok_latencies_ms_;
  std::map<grpc::StatusCode, int64_t> status_counts_;
  std::map<grpc::StatusCode, double> status_max_latency_ms_;
  int64_t sentences_ = 0;
  int64_t generated_tokens_ = 0;
  Clock::time_point burst_start_;
  bool burst_failed_ = false;  // A call of the current burst failed.
  std::vector<double> ok_burst_latencies_ms_;
};

}  // namespace fanyi

#endif  // FANYI_CLIENT_LOAD_TALLY_H_
