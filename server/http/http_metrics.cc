#include "server/http/http_metrics.h"

namespace fanyi {

HttpMetrics::HttpMetrics(prometheus::Registry& registry)
    : requests_total_(prometheus::BuildCounter()
                          .Name("fanyi_http_requests_total")
                          .Help("HTTP requests answered, by route and status "
                                "code.")
                          .Register(registry)),
      request_duration_(prometheus::BuildHistogram()
                            .Name("fanyi_http_request_duration_seconds")
                            .Help("Time from reading an HTTP request to "
                                  "handing its response to the connection, "
                                  "by route.")
                            .Register(registry)),
      hang_ups_(prometheus::BuildCounter()
                    .Name("fanyi_http_hang_ups_total")
                    .Help("HTTP clients that closed their connection while "
                          "their request was handled; its decoding was "
                          "cancelled.")
                    .Register(registry)
                    .Add({})),
      redis_up_(prometheus::BuildGauge()
                    .Name("fanyi_http_limits_redis_up")
                    .Help("1 while Redis, which keeps the request limits' "
                          "counters for every replica (--redis_url), "
                          "answers; 0 while each replica counts its own.")
                    .Register(registry)
                    .Add({})),
      redis_failures_(prometheus::BuildCounter()
                          .Name("fanyi_http_limits_redis_failures_total")
                          .Help("Limit checks that Redis did not answer, "
                                "counted in this replica instead.")
                          .Register(registry)
                          .Add({})) {}

void HttpMetrics::RecordLimitStore(bool answered) {
  redis_up_.Set(answered ? 1 : 0);
  if (!answered) redis_failures_.Increment();
}

void HttpMetrics::RecordHangUp() { hang_ups_.Increment(); }

void HttpMetrics::Record(const std::string& route, int status,
                         double duration_seconds) {
  requests_total_.Add({{"route", route}, {"code", std::to_string(status)}})
      .Increment();
  request_duration_
      .Add({{"route", route}},
           prometheus::Histogram::BucketBoundaries{0.001, 0.0025, 0.005, 0.01,
                                                   0.025, 0.05, 0.1, 0.25, 0.5,
                                                   1.0, 2.5, 5.0, 10.0})
      .Observe(duration_seconds);
}

}  // namespace fanyi
