#ifndef FANYI_SERVER_SERVER_METRICS_H_
#define FANYI_SERVER_SERVER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/pipeline/output_guard.h"
#include "common/pipeline/text_translation.h"
#include "grpcpp/support/status.h"

namespace fanyi {

class ModelMetrics;

// The server's Prometheus metrics, registered on a registry the caller owns
// (and exposes). Every sample carries a `model` label, the served model's
// name ("" for RPCs refused before a model was chosen); the decoding metrics
// of one model are its ModelMetrics. Thread-safe: prometheus-cpp metrics
// are atomic, and adding a label set to a family locks it.
class ServerMetrics {
 public:
  // Registers every metric family on `registry`, which must outlive this.
  explicit ServerMetrics(prometheus::Registry& registry);

  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  // Records a finished RPC: fanyi_requests_total{model,method,code} and
  // fanyi_request_duration_seconds{model,method}.
  void RecordRequest(const std::string& model, const std::string& method,
                     grpc::StatusCode code, double duration_seconds);
  // fanyi_requests_in_flight: call RequestStarted when an RPC arrives and
  // RequestFinished when it completes.
  void RequestStarted();
  void RequestFinished();

  // The decoding metrics of version `version` of model `name` (checkpoint
  // `checkpoint`, decoding on `device`): its samples are labelled
  // model=`name`, shared by the model's versions (fanyi_queue_depth is
  // their sum), and fanyi_model_info{model,version,repository_version,
  // device} is 1 while an object returned for those labels lives. Must not
  // outlive this.
  std::unique_ptr<ModelMetrics> ForModel(const std::string& name,
                                         int64_t version,
                                         const std::string& checkpoint,
                                         const std::string& device);

 private:
  friend class ModelMetrics;

  // fanyi_model_info's sample for `labels`, counted: two versions loaded
  // from the same folder (a rollback while the first drains) share one,
  // which stays until both are gone.
  void AcquireModelInfo(const prometheus::Labels& labels);
  void ReleaseModelInfo(const prometheus::Labels& labels);

  prometheus::Family<prometheus::Counter>& requests_total_;
  prometheus::Family<prometheus::Histogram>& request_duration_;
  prometheus::Family<prometheus::Histogram>& queue_wait_;
  prometheus::Family<prometheus::Histogram>& decode_duration_;
  prometheus::Family<prometheus::Histogram>& batch_size_;
  prometheus::Family<prometheus::Counter>& generated_tokens_;
  prometheus::Family<prometheus::Counter>& sentences_;
  prometheus::Family<prometheus::Counter>& unknown_words_;
  prometheus::Family<prometheus::Counter>& unplaced_spans_;
  prometheus::Family<prometheus::Counter>& capped_;
  prometheus::Family<prometheus::Counter>& dropped_unknown_;
  prometheus::Family<prometheus::Histogram>& confidence_;
  prometheus::Family<prometheus::Counter>& broken_outputs_;
  prometheus::Family<prometheus::Counter>& repaired_outputs_;
  prometheus::Family<prometheus::Gauge>& queue_depth_;
  prometheus::Gauge& requests_in_flight_;
  prometheus::Family<prometheus::Gauge>& model_info_;
  std::mutex model_info_mutex_;
  // Holders of each fanyi_model_info sample; guarded by model_info_mutex_.
  std::map<prometheus::Labels, int> model_info_holders_;
};

// The decoding metrics of one served model version (ServerMetrics::ForModel).
// Thread-safe.
class ModelMetrics {
 public:
  // Takes this version's part out of fanyi_queue_depth, and its
  // fanyi_model_info sample unless another version holds it too.
  ~ModelMetrics();

  ModelMetrics(const ModelMetrics&) = delete;
  ModelMetrics& operator=(const ModelMetrics&) = delete;

  // fanyi_queue_wait_seconds: time a text spent queued before it was
  // admitted to decoding.
  void ObserveQueueWait(double seconds);
  // fanyi_batch_size: rows decoded by one decoding step. With continuous
  // batching rows join and leave between steps, so this is no longer the
  // size of a batch decoded start to finish (its meaning before); a beam
  // search batch, decoded whole, counts as one step of its rows.
  void ObserveStep(int rows);
  // One text decoded: fanyi_decode_duration_seconds, from its admission to
  // its last token (other rows share the steps, so this is a latency, not a
  // cost), and its tokens in fanyi_generated_tokens_total.
  void ObserveDecode(double decode_seconds, int generated_tokens);
  // One text translated: its sentences (fanyi_sentences_total), source
  // words the vocabulary lacks (fanyi_unknown_words_total), verbatim spans
  // the model did not place (fanyi_unplaced_spans_total), sentences or
  // clauses cut by the length cap (fanyi_capped_translations_total) and
  // unknown tokens the model generated that no source piece replaced,
  // dropped (fanyi_dropped_unknown_tokens_total), and, when the model decoded
  // anything, its confidence (fanyi_translation_confidence).
  void ObserveText(const TextTranslation& translation);
  // One part the OutputGuard found broken: fanyi_broken_outputs_total by
  // kind, and fanyi_repaired_outputs_total when its retry was kept.
  // Nothing for a part found whole.
  void ObserveGuard(const GuardVerdict& verdict);
  // This version's sentences and clauses waiting in its queue right now;
  // fanyi_queue_depth adds up the model's versions (a draining one and the
  // new one, during a reload). Calls for one version must not overlap.
  void SetQueueDepth(int depth);

 private:
  friend class ServerMetrics;
  ModelMetrics(ServerMetrics& families, const std::string& name,
               int64_t version, const std::string& checkpoint,
               const std::string& device);

  ServerMetrics& families_;
  const std::string name_;
  const prometheus::Labels model_info_labels_;
  prometheus::Histogram& queue_wait_;
  prometheus::Histogram& decode_duration_;
  prometheus::Histogram& batch_size_;
  prometheus::Counter& generated_tokens_;
  prometheus::Counter& sentences_;
  prometheus::Counter& unknown_words_;
  prometheus::Counter& unplaced_spans_;
  prometheus::Counter& capped_;
  prometheus::Counter& dropped_unknown_;
  prometheus::Histogram& confidence_;
  prometheus::Counter& repaired_outputs_;
  prometheus::Gauge& queue_depth_;
  int queue_depth_part_ = 0;  // This version's part of queue_depth_.
};

}  // namespace fanyi

#endif  // FANYI_SERVER_SERVER_METRICS_H_
