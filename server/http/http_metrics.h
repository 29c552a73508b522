#ifndef FANYI_SERVER_HTTP_HTTP_METRICS_H_
#define FANYI_SERVER_HTTP_HTTP_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

namespace fanyi {

// The HTTP surface's Prometheus metrics: fanyi_http_requests_total{route,
// code} and fanyi_http_request_duration_seconds{route}. `route` is one of
// the served routes, or "other" (so that probing random paths adds no
// label sets). Thread-safe.
class HttpMetrics {
 public:
  // Registers the families on `registry`, which must outlive this.
  explicit HttpMetrics(prometheus::Registry& registry);

  HttpMetrics(const HttpMetrics&) = delete;
  HttpMetrics& operator=(const HttpMetrics&) = delete;

  // Records one answered request.
  void Record(const std::string& route, int status, double duration_seconds);
  // Records one client that closed its connection while its request was
  // handled (fanyi_http_hang_ups_total).
  void RecordHangUp();
  // Records whether Redis, which keeps the limits' counters
  // (--redis_url), answered a call: fanyi_http_limits_redis_up (1 or 0)
  // and, when it did not, fanyi_http_limits_redis_failures_total.
  void RecordLimitStore(bool answered);

 private:
  prometheus::Family<prometheus::Counter>& requests_total_;
  prometheus::Family<prometheus::Histogram>& request_duration_;
  prometheus::Counter& hang_ups_;
  prometheus::Gauge& redis_up_;
  prometheus::Counter& redis_failures_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_HTTP_METRICS_H_
