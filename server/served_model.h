#ifndef FANYI_SERVER_SERVED_MODEL_H_
#define FANYI_SERVER_SERVED_MODEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/pipeline/translator.h"
#include "server/request_batcher.h"
#include "server/request_queue.h"
#include "server/server_metrics.h"

namespace fanyi {

class DecodeEngine;

// Builds a decode worker's engine on a loaded model.
using EngineFactory =
    std::function<std::unique_ptr<DecodeEngine>(const Translator& translator)>;

// How every served model is loaded and decoded (from ServerOptions).
struct ModelSettings {
  // Device, threads per worker, decoder, request limits and beam sizes.
  TranslatorOptions translator;
  int workers = 1;         // Decode workers, each with its own engine.
  BatcherOptions batcher;  // Rows per step, batch delay, queue size.
  // Each worker's engine; empty: a TranslatorDecodeEngine (ServerOptions).
  EngineFactory engine_factory;
};

// One version of one served model: its translator (with its text
// pipeline), its request queue and decode workers (a RequestBatcher with an
// engine per worker) and its metrics. Each served model has workers of its own,
// so models never wait for each other's rows (docs/design.md, "Several
// models"). Thread-safe.
class ServedModel {
 public:
  // Loads checkpoint directory `directory` as version `version` of model
  // `name` (empty: named for its pair, "en-zh") and starts its workers;
  // `on_worker_stopped` (may be empty) is called on a worker's thread when
  // its engine kept failing and it stopped for good. Throws
  // std::runtime_error naming the file when the checkpoint cannot be loaded.
  static std::shared_ptr<ServedModel> Load(
      const std::string& name, int64_t version, const std::string& directory,
      const ModelSettings& settings, ServerMetrics& metrics,
      std::function<void()> on_worker_stopped);
  // Stops (draining what it holds) and joins the workers.
  ~ServedModel();

  ServedModel(const ServedModel&) = delete;
  ServedModel& operator=(const ServedModel&) = delete;

  const std::string& name() const { return name_; }
  int64_t version() const { return version_; }
  // Preparing and assembling texts (const methods only: decoding happens in
  // the batcher's workers).
  const Translator& translator() const { return *translator_; }
  RequestBatcher& batcher() { return *batcher_; }
  ModelMetrics& metrics() { return *metrics_; }

  // Whether it takes new texts: not stopped, and a worker still decodes.
  bool Serving() { return batcher_->Serving(); }

  // Refuses new texts with UNAVAILABLE and decodes the queued and running
  // ones to the end; returns when they are answered. Idempotent.
  void Stop();

 private:
  ServedModel() = default;

  std::string name_;
  int64_t version_ = 0;
  // Declared in dependency order: each member is destroyed before the ones
  // it uses.
  std::unique_ptr<Translator> translator_;
  std::unique_ptr<ModelMetrics> metrics_;
  std::vector<std::unique_ptr<DecodeEngine>> engines_;  // One per worker.
  std::unique_ptr<RequestBatcher> batcher_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_SERVED_MODEL_H_
