#ifndef FANYI_CLIENT_LOAD_REPORT_H_
#define FANYI_CLIENT_LOAD_REPORT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace fanyi {

// What a LoadGenerator run measured. Latencies run from sending a request to
// its completion (std::chrono::steady_clock) and cover OK requests only.
struct LoadReport {
  std::string mode;         // "closed" or "open".
  int concurrency = 0;      // Closed loop: requests kept in flight.
  double offered_rate = 0;  // Open loop: requests/s asked for; 0 otherwise.
  double send_rate = 0;     // Requests/s actually sent while issuing.
  int64_t requests_sent = 0;
  int64_t requests_completed = 0;
  std::map<std::string, int64_t> status_counts;  // By gRPC code name ("OK",
                                                 // "RESOURCE_EXHAUSTED").
  // Slowest completion of each code in ms, failures included: how quickly
  // a full queue or a deadline answers.
  std::map<std::string, double> status_max_latency_ms;
  int64_t ok_requests = 0;
  int64_t sentences = 0;         // Sum over OK responses of the sentences the
                                 // server counted (at least 1 per response).
  int64_t generated_tokens = 0;  // Sum over OK responses.
  int64_t max_in_flight_waits = 0;  // Open loop: sends delayed by the cap.
  double wall_seconds = 0;  // Start of the measured phase (after warmup) to
                            // its last completion.
  double requests_per_second = 0;          // OK requests / wall_seconds.
  double sentences_per_second = 0;         // sentences / wall_seconds.
  double generated_tokens_per_second = 0;  // generated_tokens / wall_seconds.
  // Latency percentiles in ms over OK requests (nearest rank, see
  // NearestRankPercentile); 0 when no request succeeded.
  double latency_p50_ms = 0;
  double latency_p90_ms = 0;
  double latency_p99_ms = 0;
  double latency_max_ms = 0;
  double latency_mean_ms = 0;
  // Bursts only: the bursts whose requests all succeeded, and percentiles of
  // their latency (first send to last completion) in ms.
  int64_t ok_bursts = 0;
  double burst_latency_p50_ms = 0;
  double burst_latency_p90_ms = 0;
  double burst_latency_max_ms = 0;

  // Fills the latency figures from the OK requests' latencies in ms.
  void SummarizeLatencies(std::vector<double> latencies_ms);
  // Fills the burst figures from the latencies of the bursts whose requests
  // all succeeded, in ms.
  void SummarizeBursts(std::vector<double> latencies_ms);

  // A short human-readable table.
  std::string ToTable() const;
  // The same figures as a JSON object, for scripts.
  std::string ToJson() const;
};

// The p-th percentile (0 < p <= 100) of `sorted` (ascending) by the nearest-
// rank definition: the smallest sample such that at least p% of the samples
// are less than or equal to it, i.e. sorted[ceil(p / 100 * n) - 1]. Always one
// of the samples, never interpolated. Throws std::invalid_argument for an
// empty sample or p outside (0, 100].
double NearestRankPercentile(const std::vector<double>& sorted, double p);

}  // namespace fanyi

#endif  // FANYI_CLIENT_LOAD_REPORT_H_
