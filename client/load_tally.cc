#include "client/load_tally.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"

namespace fanyi {
namespace {

// The canonical name of a gRPC status code ("OK", "INVALID_ARGUMENT", ...);
// gRPC's codes are numbered like absl's.
std::string StatusCodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

double Seconds(LoadTally::Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

}  // namespace

void LoadTally::StartBurst(Clock::time_point start) {
  burst_start_ = start;
  burst_failed_ = false;
}

void LoadTally::Record(grpc::StatusCode code, Clock::time_point sent_at,
                       Clock::time_point done, int64_t sentences,
                       int64_t generated_tokens, bool burst_over) {
  ++requests_completed_;
  const double latency_ms = Seconds(done - sent_at) * 1000.0;
  ++status_counts_[code];
  double& max_ms = status_max_latency_ms_[code];
  max_ms = std::max(max_ms, latency_ms);
  if (code == grpc::StatusCode::OK) {
    ok_latencies_ms_.push_back(latency_ms);
    sentences_ += sentences;
    generated_tokens_ += generated_tokens;
  } else {
    burst_failed_ = true;
  }
  last_completion_ = done;
  if (burst_over && !burst_failed_) {
    ok_burst_latencies_ms_.push_back(Seconds(done - burst_start_) * 1000.0);
  }
}

void LoadTally::SetIssued(Clock::time_point start, Clock::time_point end,
                          int64_t sent, int64_t max_in_flight_waits) {
  issue_start_ = start;
  issue_end_ = end;
  requests_sent_ = sent;
  max_in_flight_waits_ = max_in_flight_waits;
}

LoadReport LoadTally::Report(const LoadOptions& options) const {
  LoadReport report;
  report.mode = options.rate > 0 ? "open" : "closed";
  report.concurrency = options.concurrency;
  report.offered_rate = options.rate;
  const double issue_seconds = Seconds(issue_end_ - issue_start_);
  report.send_rate = issue_seconds > 0 ? requests_sent_ / issue_seconds : 0;
  report.requests_sent = requests_sent_;
  report.requests_completed = requests_completed_;
  for (const auto& [code, count] : status_counts_) {
    report.status_counts[StatusCodeName(code)] = count;
  }
  for (const auto& [code, max_ms] : status_max_latency_ms_) {
    report.status_max_latency_ms[StatusCodeName(code)] = max_ms;
  }
  report.ok_requests = static_cast<int64_t>(ok_latencies_ms_.size());
  report.sentences = sentences_;
  report.generated_tokens = generated_tokens_;
  report.max_in_flight_waits = max_in_flight_waits_;
  report.wall_seconds = requests_completed_ > 0
                            ? Seconds(last_completion_ - issue_start_)
                            : issue_seconds;
  if (report.wall_seconds > 0) {
    report.requests_per_second = report.ok_requests / report.wall_seconds;
    report.sentences_per_second = report.sentences / report.wall_seconds;
    report.generated_tokens_per_second =
        report.generated_tokens / report.wall_seconds;
  }
  report.SummarizeLatencies(ok_latencies_ms_);
  report.SummarizeBursts(ok_burst_latencies_ms_);
  return report;
}

}  // namespace fanyi
