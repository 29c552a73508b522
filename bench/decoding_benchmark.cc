#include "bench/decoding_benchmark.h"

#include <torch/utils.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoder_selection.h"
#include "common/decoding/greedy_decoder.h"
#include "common/model/checkpoint.h"
#include "common/model/device.h"
#include "common/model/step_graphs.h"
#include "common/pipeline/translator.h"

namespace fanyi {

struct DecodingBenchmark::Impl {
  BenchmarkOptions options;
  Checkpoint checkpoint;
  // Used only to encode sources, so that tokenization and the length check
  // are the Translator's own; shares the checkpoint's model.
  std::unique_ptr<Translator> translator;
  DecodingOptions limits;
  std::vector<BenchmarkSource> sources;
  int64_t skipped = 0;
};

namespace {

using Rows = std::vector<std::vector<int64_t>>;

// Decoding steps of the tutorials' reference decoder, per sentence.
constexpr int64_t kTutorialSteps = 59;

// Decodes `batch` with `mode`'s algorithm, greedy and beam on `decoder`
// (the stream's own, kept from batch to batch as a server's decode worker
// keeps it, CUDA graphs included); returns target ids per row.
Rows DecodeBatch(ContinuousDecoder& decoder, TransformerImpl& model,
                 const Rows& batch, const BenchmarkMode& mode) {
  switch (mode.algorithm) {
    case DecodingAlgorithm::kGreedy:
    case DecodingAlgorithm::kBeamSearch: {
      // The served engine: greedy rows and beam groups in the continuous
      // decoder.
      std::vector<EncodedSource> sources;
      for (const auto& source : batch) {
        sources.push_back({source, static_cast<int>(mode.beam_size)});
      }
      return TargetIds(decoder.DecodeAll(sources));
    }
    case DecodingAlgorithm::kGreedyWithoutCache: {
      // As the tutorials' greedy_decode(max_len=60): 59 steps for every
      // sentence, whether or not </s> came earlier.
      DecodingOptions tutorial;
      tutorial.max_length = kTutorialSteps;
      tutorial.length_ratio = 0;
      tutorial.length_offset = kTutorialSteps;
      Rows targets;
      for (const auto& source : batch) {
        targets.push_back(GreedyDecodeWithoutCache(model, source, tutorial,
                                                   /*run_all_steps=*/true));
      }
      return targets;
    }
  }
  throw std::logic_error("unknown decoding algorithm");
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle]
                           : (values[middle - 1] + values[middle]) / 2;
}

}  // namespace

std::unique_ptr<DecodingBenchmark> DecodingBenchmark::Load(
    const std::string& model_dir, const BenchmarkOptions& options) {
  if (options.threads < 1) throw std::invalid_argument("threads must be >= 1");
  if (options.repeats < 1) throw std::invalid_argument("repeats must be >= 1");
  if (options.workers < 1) throw std::invalid_argument("workers must be >= 1");
  if (options.device_steps < 0 || options.device_steps > 64) {
    throw std::invalid_argument("device_steps must be between 0 and 64");
  }
  torch::set_num_threads(options.threads);
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  const torch::Device device = ResolveDevice(options.device);
  impl->checkpoint = LoadCheckpoint(model_dir, device);
  SelectDecoder(*impl->checkpoint.model, options.cpu_decoder,
                options.compute_type);
  TranslatorOptions translator_options;
  translator_options.device = options.device;
  translator_options.length_penalty = options.length_penalty;
  translator_options.beam_stops_early = options.beam_stops_early;
  impl->translator =
      Translator::FromCheckpoint(impl->checkpoint, translator_options);
  // The same limits as Translator::FromCheckpoint: the length rule of
  // DecodingOptions, capped by what the position table can hold.
  impl->limits.length_ratio = translator_options.length_ratio;
  impl->limits.length_offset = translator_options.length_offset;
  impl->limits.beam_stops_early = options.beam_stops_early;
  impl->limits.cuda_graphs = options.cuda_graphs;
  impl->limits.cuda_graph_after_steps = options.cuda_graph_after_steps;
  impl->limits.graph_dry_run = options.graph_dry_run;
  // As the Translator: the GPU's only, or a dry run's, which plays one.
  if (options.graph_dry_run ||
      !impl->checkpoint.model->parameters().front().device().is_cpu()) {
    impl->limits.device_steps = options.device_steps;
  }
  impl->limits.max_length =
      std::min<int64_t>(translator_options.max_decode_length,
                        impl->checkpoint.model->config().max_positions - 1);
  return std::unique_ptr<DecodingBenchmark>(
      new DecodingBenchmark(std::move(impl)));
}

DecodingBenchmark::DecodingBenchmark(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}

DecodingBenchmark::~DecodingBenchmark() = default;

void DecodingBenchmark::SetSources(const std::vector<std::string>& texts) {
  impl_->sources.clear();
  impl_->skipped = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    try {
      impl_->sources.push_back(
          {static_cast<int64_t>(i + 1),
           impl_->translator->pipeline().EncodeSentence(texts[i]).ids});
    } catch (const std::invalid_argument&) {
      ++impl_->skipped;
    }
  }
}

ModeTiming DecodingBenchmark::Time(const BenchmarkMode& mode) {
  if (mode.batch_size < 1 || mode.beam_size < 1) {
    throw std::invalid_argument(mode.name +
                                ": batch and beam sizes must be >= 1");
  }
  if (mode.algorithm == DecodingAlgorithm::kGreedyWithoutCache &&
      mode.batch_size != 1) {
    throw std::invalid_argument(mode.name +
                                ": the reference decoder takes one sentence");
  }
  size_t count = impl_->sources.size();
  if (mode.max_sentences > 0) {
    count = std::min<size_t>(count, static_cast<size_t>(mode.max_sentences));
  }
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return impl_->sources[a].ids.size() < impl_->sources[b].ids.size();
  });
  std::vector<Rows> batches;
  std::vector<size_t> batch_begin;  // Index into `order` of each first row.
  for (size_t begin = 0; begin < count; begin += mode.batch_size) {
    Rows batch;
    for (size_t k = begin; k < std::min(count, begin + mode.batch_size); ++k) {
      batch.push_back(impl_->sources[order[k]].ids);
    }
    batches.push_back(std::move(batch));
    batch_begin.push_back(begin);
  }
  const int workers = mode.algorithm == DecodingAlgorithm::kGreedyWithoutCache
                          ? 1
                          : impl_->options.workers;
  const int threads_per_worker = std::max(1, impl_->options.threads / workers);

  TransformerImpl& model = *impl_->checkpoint.model;
  ModeTiming timing;
  timing.mode = mode;
  timing.sentences = static_cast<int64_t>(count);
  if (count == 0) return timing;
  std::vector<std::unique_ptr<ContinuousDecoder>> decoders;
  for (int w = 0; w < workers; ++w) {
    decoders.push_back(std::make_unique<ContinuousDecoder>(
        model, impl_->limits, impl_->translator->length_penalty()));
  }
  // One untimed batch first: the first calls allocate and set up threads.
  DecodeBatch(*decoders.front(), model, batches.front(), mode);

  for (int run = 0; run < impl_->options.repeats; ++run) {
    Rows targets(count);
    std::atomic<size_t> next_batch{0};
    // Each stream takes the next batch until none is left; rows land in
    // their sources' places, so the order of completion does not matter.
    auto decode_batches = [&](ContinuousDecoder& decoder) {
      for (size_t b = next_batch++; b < batches.size(); b = next_batch++) {
        Rows decoded = DecodeBatch(decoder, model, batches[b], mode);
        for (size_t k = 0; k < decoded.size(); ++k) {
          targets[order[batch_begin[b] + k]] = std::move(decoded[k]);
        }
      }
    };
    const auto start = std::chrono::steady_clock::now();
    if (workers == 1) {
      decode_batches(*decoders.front());
    } else {
      std::vector<std::thread> streams;
      std::vector<std::exception_ptr> failures(workers);
      for (int w = 0; w < workers; ++w) {
        streams.emplace_back([&, w] {
          try {
            torch::set_num_threads(threads_per_worker);
            decode_batches(*decoders[w]);
          } catch (...) {
            failures[w] = std::current_exception();
          }
        });
      }
      for (std::thread& stream : streams) stream.join();
      // The streams' setting is also what new threads start with; restore.
      torch::set_num_threads(impl_->options.threads);
      for (const std::exception_ptr& failure : failures) {
        if (failure) std::rethrow_exception(failure);
      }
    }
    timing.seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    timing.targets = std::move(targets);
  }
  for (const auto& decoder : decoders) {
    if (const StepGraphs* graphs = decoder->graphs()) {
      timing.graph_captures += graphs->captures();
      timing.graph_replays += graphs->replays();
      timing.graph_steps += graphs->steps();
      if (!graphs->failure().empty()) timing.graph_failure = graphs->failure();
    }
  }
  timing.target_tokens = 0;
  for (const auto& row : timing.targets) {
    timing.target_tokens += static_cast<int64_t>(row.size());
  }
  timing.median_seconds = Median(timing.seconds);
  timing.sentences_per_second = timing.sentences / timing.median_seconds;
  timing.tokens_per_second = timing.target_tokens / timing.median_seconds;
  return timing;
}

const std::vector<BenchmarkSource>& DecodingBenchmark::sources() const {
  return impl_->sources;
}

int64_t DecodingBenchmark::skipped() const { return impl_->skipped; }

const std::string& DecodingBenchmark::model_version() const {
  return impl_->checkpoint.model_version;
}

std::string DecodingBenchmark::device_name() const {
  return impl_->translator->device_name();
}

double DecodingBenchmark::length_penalty() const {
  return impl_->translator->length_penalty();
}

const BenchmarkOptions& DecodingBenchmark::options() const {
  return impl_->options;
}

std::vector<BenchmarkMode> ParseBenchmarkModes(const std::string& list,
                                               int batch_size, int beam_size,
                                               int64_t reference_sentences) {
  if (batch_size < 1 || beam_size < 1) {
    throw std::invalid_argument("batch_size and beam_size must be >= 1");
  }
  const std::string batch = std::to_string(batch_size);
  std::vector<BenchmarkMode> modes;
  std::stringstream names(list);
  std::string name;
  while (std::getline(names, name, ',')) {
    if (name == "greedy1") {
      modes.push_back({"greedy_b1", DecodingAlgorithm::kGreedy, 1, 1, 0});
    } else if (name == "greedy") {
      modes.push_back(
          {"greedy_b" + batch, DecodingAlgorithm::kGreedy, batch_size, 1, 0});
    } else if (name == "beam") {
      modes.push_back({"beam" + std::to_string(beam_size) + "_b" + batch,
                       DecodingAlgorithm::kBeamSearch, batch_size, beam_size,
                       0});
    } else if (name == "reference") {
      modes.push_back({"reference_b1", DecodingAlgorithm::kGreedyWithoutCache,
                       1, 1, reference_sentences});
    } else {
      throw std::invalid_argument(
          "unknown mode '" + name +
          "' (expected greedy1, greedy, beam or reference)");
    }
  }
  return modes;
}

std::string LibTorchVersion() { return TORCH_VERSION; }

}  // namespace fanyi
