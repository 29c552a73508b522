#ifndef FANYI_SERVER_SERVER_METRICS_H_
#define FANYI_SERVER_SERVER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

#include "grpcpp/support/status.h"

namespace fanyi {

// The server's Prometheus metrics, registered on a registry the caller owns
// (and exposes). Thread-safe: prometheus-cpp metrics are atomic.
class ServerMetrics {
 public:
  // Registers every metric family on `registry`, which must outlive this.
  explicit ServerMetrics(prometheus::Registry& registry);

  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // Records a finished RPC: fanyi_requests_total{method,code} and
  // fanyi_request_duration_seconds{method}.
  void RecordRequest(const std::string& method, grpc::StatusCode code,
                     double duration_seconds);
  // fanyi_requests_in_flight: call RequestStarted when an RPC arrives and
  // RequestFinished when it completes.
  void RequestStarted();
  void RequestFinished();

  // fanyi_queue_wait_seconds: time a text spent queued before it was
  // admitted to decoding.
  void ObserveQueueWait(double seconds);
  // fanyi_batch_size: rows decoded by one decoding step. With continuous
  // batching rows join and leave between steps, so this is no longer the size
  // of a batch decoded start to finish (its meaning before); a beam search
  // batch, decoded whole, counts as one step of its rows.
  void ObserveStep(int rows);
  // One text decoded: fanyi_decode_duration_seconds, from its admission to
  // its last token (other rows share the steps, so this is a latency, not a
  // cost), and its tokens in fanyi_generated_tokens_total.
  void ObserveDecode(double decode_seconds, int generated_tokens);
  // One text translated: its sentences (fanyi_sentences_total), source
  // words the vocabulary lacks (fanyi_unknown_words_total), verbatim spans
  // the model did not place (fanyi_unplaced_spans_total) and sentences or
  // clauses cut by the length cap (fanyi_capped_translations_total).
  void ObserveText(int sentences, int unknown_words, int unplaced_spans,
                   int capped);
  // Requests waiting in the batcher's queue right now.
  void SetQueueDepth(int depth);
  // Sets fanyi_model_info{version,device} = 1.
  void SetModelInfo(const std::string& version, const std::string& device);

 private:
  prometheus::Family<prometheus::Counter>& requests_total_;
  prometheus::Family<prometheus::Histogram>& request_duration_;
  prometheus::Histogram& queue_wait_;
  prometheus::Histogram& decode_duration_;
  prometheus::Histogram& batch_size_;
  prometheus::Counter& generated_tokens_;
  prometheus::Counter& sentences_;
  prometheus::Counter& unknown_words_;
  prometheus::Counter& unplaced_spans_;
  prometheus::Counter& capped_;
  prometheus::Gauge& queue_depth_;
  prometheus::Gauge& requests_in_flight_;
  prometheus::Family<prometheus::Gauge>& model_info_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_SERVER_METRICS_H_
