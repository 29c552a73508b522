#include "client/load_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace fanyi {

double NearestRankPercentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) {
    throw std::invalid_argument("percentile of an empty sample");
  }
  if (!(p > 0 && p <= 100)) {
    throw std::invalid_argument("percentile must be in (0, 100], got " +
                                std::to_string(p));
  }
  const double n = static_cast<double>(sorted.size());
  // p * n first: exact for whole percentiles, so p99 of 100 samples is rank
  // 99, not 100 through 0.99 * 100 rounding up.
  const double rank = std::ceil(p * n / 100.0);
  const size_t index = static_cast<size_t>(std::clamp(rank, 1.0, n)) - 1;
  return sorted[index];
}

void LoadReport::SummarizeLatencies(std::vector<double> latencies_ms) {
  if (latencies_ms.empty()) return;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  latency_p50_ms = NearestRankPercentile(latencies_ms, 50);
  latency_p90_ms = NearestRankPercentile(latencies_ms, 90);
  latency_p99_ms = NearestRankPercentile(latencies_ms, 99);
  latency_max_ms = latencies_ms.back();
  latency_mean_ms =
      std::accumulate(latencies_ms.begin(), latencies_ms.end(), 0.0) /
      latencies_ms.size();
}

void LoadReport::SummarizeBursts(std::vector<double> latencies_ms) {
  if (latencies_ms.empty()) return;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  ok_bursts = static_cast<int64_t>(latencies_ms.size());
  burst_latency_p50_ms = NearestRankPercentile(latencies_ms, 50);
  burst_latency_p90_ms = NearestRankPercentile(latencies_ms, 90);
  burst_latency_max_ms = latencies_ms.back();
}

std::string LoadReport::ToTable() const {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1);
  if (mode == "open") {
    out << "mode          open loop, offered " << offered_rate
        << " requests/s (Poisson), sent " << send_rate << "/s";
    if (max_in_flight_waits > 0) {
      out << ", " << max_in_flight_waits << " sends held by the in-flight cap";
    }
    out << "\n";
  } else {
    out << "mode          closed loop, concurrency " << concurrency
        << (ok_bursts > 0 ? ", in bursts" : "") << "\n";
  }
  out << "requests      sent " << requests_sent << ", completed "
      << requests_completed << "\n";
  out << "status       ";
  for (const auto& [code, count] : status_counts) {
    out << " " << code << " " << count;
  }
  out << "\n";
  out << std::setprecision(1) << "slowest (ms) ";
  for (const auto& [code, max_ms] : status_max_latency_ms) {
    out << " " << code << " " << max_ms;
  }
  out << "\n";
  out << std::setprecision(3) << "wall          " << wall_seconds << " s\n";
  out << std::setprecision(1) << "throughput    " << requests_per_second
      << " requests/s, " << sentences_per_second << " sentences/s, "
      << generated_tokens_per_second << " generated tokens/s\n";
  out << std::setprecision(2) << "latency (ms)  p50 " << latency_p50_ms
      << "  p90 " << latency_p90_ms << "  p99 " << latency_p99_ms << "  max "
      << latency_max_ms << "  mean " << latency_mean_ms << "  (OK only)\n";
  if (ok_bursts > 0) {
    out << "bursts (ms)   p50 " << burst_latency_p50_ms << "  p90 "
        << burst_latency_p90_ms << "  max " << burst_latency_max_ms << "  ("
        << ok_bursts << " bursts with every request OK)\n";
  }
  return out.str();
}

std::string LoadReport::ToJson() const {
  nlohmann::json json = {
      {"mode", mode},
      {"concurrency", concurrency},
      {"offered_rate", offered_rate},
      {"send_rate", send_rate},
      {"requests_sent", requests_sent},
      {"requests_completed", requests_completed},
      {"status_counts", status_counts},
      {"status_max_latency_ms", status_max_latency_ms},
      {"ok_requests", ok_requests},
      {"sentences", sentences},
      {"generated_tokens", generated_tokens},
      {"max_in_flight_waits", max_in_flight_waits},
      {"wall_seconds", wall_seconds},
      {"requests_per_second", requests_per_second},
      {"sentences_per_second", sentences_per_second},
      {"generated_tokens_per_second", generated_tokens_per_second},
      {"latency_ms",
       {{"p50", latency_p50_ms},
        {"p90", latency_p90_ms},
        {"p99", latency_p99_ms},
        {"max", latency_max_ms},
        {"mean", latency_mean_ms}}},
      {"ok_bursts", ok_bursts},
      {"burst_latency_ms",
       {{"p50", burst_latency_p50_ms},
        {"p90", burst_latency_p90_ms},
        {"max", burst_latency_max_ms}}}};
  return json.dump(2) + "\n";
}

}  // namespace fanyi
