#include "common/model/step_graphs.h"

#include <algorithm>
#include <utility>

#ifdef FANYI_WITH_CUDA
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace fanyi {

struct StepGraphs::Graph {
#ifdef FANYI_WITH_CUDA
  at::cuda::CUDAGraph graph;
#endif
  std::vector<torch::Tensor> inputs;  // Copied into before each replay.
  torch::Tensor output;               // Written by each replay.
  uint64_t last_used = 0;
};

bool StepGraphs::Available() {
#ifdef FANYI_WITH_CUDA
  return true;
#else
  return false;
#endif
}

StepGraphs::StepGraphs(int64_t calls_before_capture, size_t max_graphs,
                       bool dry_run)
    : calls_before_capture_(std::max<int64_t>(2, calls_before_capture)),
      max_graphs_(std::max<size_t>(1, max_graphs)),
      dry_run_(dry_run) {}

StepGraphs::~StepGraphs() = default;

torch::Tensor StepGraphs::Run(const std::vector<int64_t>& key,
                              const std::vector<torch::Tensor>& inputs,
                              const Step& step) {
  ++calls_;
  std::vector<int64_t> full_key = key;
  for (const torch::Tensor& input : inputs) {
    full_key.push_back(static_cast<int64_t>(input.scalar_type()));
    full_key.push_back(input.dim());
    full_key.insert(full_key.end(), input.sizes().begin(), input.sizes().end());
  }
  auto found = graphs_.find(full_key);
  if (found != graphs_.end()) {
    Graph& graph = *found->second;
    graph.last_used = calls_;
    ++replays_;
    if (dry_run_) return step(inputs);
    for (size_t i = 0; i < inputs.size(); ++i) {
      graph.inputs[i].copy_(inputs[i], /*non_blocking=*/true);
    }
#ifdef FANYI_WITH_CUDA
    graph.graph.replay();
#endif
    return graph.output;
  }
  // Keys without a graph are counted until one is captured; a bounded
  // count, restarted when too many keys came once or twice.
  if (calls_by_key_.size() >= 8 * max_graphs_) calls_by_key_.clear();
  int64_t& calls = calls_by_key_[full_key];
  ++calls;
  if ((dry_run_ || (Available() && inputs.front().is_cuda())) &&
      calls >= calls_before_capture_ && failure_.empty()) {
    calls_by_key_.erase(full_key);
    return Capture(full_key, inputs, step);
  }
  return step(inputs);
}

torch::Tensor StepGraphs::Capture(const std::vector<int64_t>& key,
                                  const std::vector<torch::Tensor>& inputs,
                                  const Step& step) {
  auto graph = std::make_unique<Graph>();
  if (dry_run_) {
    Keep(key, std::move(graph));
    ++replays_;
    return step(inputs);
  }
  for (const torch::Tensor& input : inputs) {
    graph->inputs.push_back(input.clone(at::MemoryFormat::Contiguous));
  }
#ifdef FANYI_WITH_CUDA
  // The side stream starts after all that the current one queued (the
  // inputs), and the current one goes on after the side stream's work.
  c10::cuda::device_synchronize();
  {
    const bool first = !capture_stream_.has_value();
    if (first) capture_stream_ = c10::cuda::getStreamFromPool();
    // Braces: with parentheses this line declares a function.
    c10::cuda::CUDAStreamGuard side{c10::cuda::CUDAStream(*capture_stream_)};
    // A warm-up run on the capture's stream before its first capture, so
    // that lazy initialisations (cuBLAS's workspace for the stream) happen
    // outside the capture. It writes the caches as the replay will, with the
    // same values.
    if (first) step(graph->inputs);
    bool ran = false;
    try {
      // Thread-local: other decoding threads go on launching meanwhile.
      if (!pool_.has_value()) pool_ = at::cuda::graph_pool_handle();
      graph->graph.capture_begin(*pool_, cudaStreamCaptureModeThreadLocal);
      graph->output = step(graph->inputs);
      ran = true;
      graph->graph.capture_end();
    } catch (const std::exception& error) {
      failure_ =
          std::string("capturing the decoding step failed: ") + error.what();
      // Ends the capture (and its allocations from the graph's pool) when
      // the step itself threw; the capture is invalid either way.
      if (!ran) {
        try {
          graph->graph.capture_end();
        } catch (const std::exception&) {
        }
      }
      (void)cudaGetLastError();
    }
  }
  c10::cuda::device_synchronize();
#endif
  if (!failure_.empty()) return step(inputs);
  Graph& captured = *graph;
  Keep(key, std::move(graph));
#ifdef FANYI_WITH_CUDA
  captured.graph.replay();
#endif
  ++replays_;
  return captured.output;
}

void StepGraphs::Keep(const std::vector<int64_t>& key,
                      std::unique_ptr<Graph> graph) {
  ++captures_;
  if (graphs_.size() >= max_graphs_) {
    auto oldest = std::min_element(
        graphs_.begin(), graphs_.end(), [](const auto& a, const auto& b) {
          return a.second->last_used < b.second->last_used;
        });
    graphs_.erase(oldest);
  }
  graph->last_used = calls_;
  graphs_.emplace(key, std::move(graph));
}

}  // namespace fanyi
