#ifndef FANYI_COMMON_MODEL_STEP_GRAPHS_H_
#define FANYI_COMMON_MODEL_STEP_GRAPHS_H_

#include <torch/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fanyi {

// A decoding step's GPU work captured as CUDA graphs and replayed. A small
// model's step is some ninety LibTorch operations of a few microseconds of
// GPU work each; launched one by one from the host, the launches cost more
// than the work. A graph replays them all with one launch, on the memory it
// was captured with, so each graph belongs to a key: what the caller names
// (the addresses and layouts of the caches the step reads and writes) plus
// the shapes of the step's small inputs (tokens, positions, biases, tables),
// which are copied into the graph's own tensors before each replay. A key
// is captured once it has come at a few calls, so that a key that comes once
// runs eagerly instead of costing a capture (more than a plain step); the
// step keeps its keys few (TransformerImpl::DecodeStep pads the batch and
// the sources to powers of two), so most come again. Not thread-safe: one per
// decoding thread. The step must launch the same work for the same key (no
// decision on tensor contents), and the weights it reads must not change while
// the graphs live.
class StepGraphs {
 public:
  // Whether this build can capture graphs: a LibTorch built with CUDA.
  static bool Available();

  // Captures a key at its `calls_before_capture`-th call (at least 2), and
  // keeps at most `max_graphs` graphs, dropping the least recently
  // used. A `dry_run`, on any device, captures nothing and runs every step
  // eagerly, but keeps the keys it would have captured and counts the
  // captures and replays as a GPU would: what graphs would do for a
  // workload, measured without one (fanyi-bench --graph_dry_run, the
  // tests).
  explicit StepGraphs(int64_t calls_before_capture = 3, size_t max_graphs = 32,
                      bool dry_run = false);
  ~StepGraphs();
  StepGraphs(const StepGraphs&) = delete;
  StepGraphs& operator=(const StepGraphs&) = delete;

  // The step: its result from `inputs`, all on one device.
  using Step = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

  // step(inputs), replayed from the graph of `key` and the inputs' shapes
  // when there is one, captured when this key came at enough calls
  // (CUDA inputs only), run eagerly otherwise. A replayed result is the
  // graph's own output, valid until the next call (which may replay into
  // it): the caller uses it before calling again, and may change it. A
  // capture that fails turns graphs off for good (failure() says why) and
  // the step runs eagerly.
  torch::Tensor Run(const std::vector<int64_t>& key,
                    const std::vector<torch::Tensor>& inputs, const Step& step);

  int64_t captures() const { return captures_; }     // Graphs captured so far.
  int64_t replays() const { return replays_; }       // Steps run from a graph.
  int64_t steps() const { return int64_t(calls_); }  // Steps run at all.
  // Why capturing failed; empty while it has not.
  const std::string& failure() const { return failure_; }

 private:
  struct Graph;

  // Captures step(inputs) under `key` and returns its first replay's result.
  torch::Tensor Capture(const std::vector<int64_t>& key,
                        const std::vector<torch::Tensor>& inputs,
                        const Step& step);
  // Counts a capture and keeps `graph` under `key`, dropping the least
  // recently used graph when there are max_graphs_.
  void Keep(const std::vector<int64_t>& key, std::unique_ptr<Graph> graph);

  int64_t calls_before_capture_;
  size_t max_graphs_;
  bool dry_run_;
  std::map<std::vector<int64_t>, std::unique_ptr<Graph>> graphs_;
  // The calls so far of keys without a graph.
  std::map<std::vector<int64_t>, int64_t> calls_by_key_;
  // The stream graphs are captured on, from the first capture on (whose
  // warm-up run set up what the stream needs, such as cuBLAS's workspace).
  std::optional<c10::Stream> capture_stream_;
  // The memory pool every graph is captured into, from the first capture
  // on: one step's intermediates are dead by the next replay, whichever
  // graph it replays, so the graphs share one pool instead of each keeping
  // its own (graphs replay one at a time, on one stream).
  std::optional<std::pair<unsigned long long, unsigned long long>> pool_;
  uint64_t calls_ = 0;  // Orders graphs by last use.
  int64_t captures_ = 0;
  int64_t replays_ = 0;
  std::string failure_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_STEP_GRAPHS_H_
