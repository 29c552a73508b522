// fanyi-bench: times fanyi's decoders (greedy, beam search, the no-cache
// reference) as library calls, without gRPC, on a file of source sentences.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "bench/benchmark_report.h"
#include "bench/decoding_benchmark.h"
#include "common/model/cpu_threading.h"
#include "common/model/process_memory.h"

// Flags live here, away from torch headers, whose glog/gflags globals clash.
ABSL_FLAG(std::string, model_dir, "",
          "Checkpoint (or training output) directory.");
ABSL_FLAG(std::string, input, "",
          "Sources: a TSV (first column) or one sentence a line.");
ABSL_FLAG(std::string, modes, "greedy1,greedy,beam,reference",
          "Comma-separated: greedy1 (greedy, batch 1), greedy (greedy, "
          "--batch_size), beam (--beam_size, --batch_size), reference "
          "(no-cache greedy, batch 1, first --reference_sentences).");
ABSL_FLAG(int, batch_size, 32, "Sentences per batch for greedy and beam.");
ABSL_FLAG(int, beam_size, 4, "Beam width of the beam mode.");
ABSL_FLAG(double, length_penalty, -1,
          "GNMT length penalty α for beam; negative: the model's own.");
ABSL_FLAG(int64_t, reference_sentences, 200,
          "Sources timed with the slow no-cache reference decoder.");
ABSL_FLAG(int64_t, max_sentences, 0, "Use only the first N sources (0: all).");
ABSL_FLAG(int, threads, 2,
          "CPU threads: intra-op threads of one stream, or split over "
          "--workers streams.");
ABSL_FLAG(int, workers, 1,
          "Decoding streams taking batches in turn (not the reference "
          "decoder, which runs one stream).");
ABSL_FLAG(bool, beam_stops_early, false,
          "Beam search: end a sentence once beam_size hypotheses ended, as "
          "CTranslate2 does with its default patience of 1.");
ABSL_FLAG(bool, cuda_graphs, true,
          "On a GPU, replay the decoding step from CUDA graphs while a batch "
          "keeps its rows (the same translations, one launch a step; 1.2x to "
          "2.6x the throughput on an H100, more GPU memory: "
          "docs/benchmarks.md).");
ABSL_FLAG(int64_t, cuda_graph_after_steps, 3,
          "Steps a key (caches, batch and source sizes) comes at before its "
          "step is captured as a CUDA graph (at least 2).");
ABSL_FLAG(bool, graph_dry_run, false,
          "Count what CUDA graphs would capture and replay, on any device, "
          "each step run eagerly as a graph replays it (with --cpu_decoder "
          "libtorch on the CPU): how many steps a GPU would replay.");
ABSL_FLAG(int64_t, device_steps, 0,
          "On a GPU, batches of greedy sentences or of beam searches run up "
          "to this many steps (at most 64) between reads, choosing tokens "
          "and beams on the device (0: read at every step); sentences join "
          "and leave between such windows. Ignored on the CPU (but in a "
          "--graph_dry_run). Not yet "
          "measured on a GPU: docs/benchmarks.md.");
ABSL_FLAG(std::string, cpu_decoder, "packed",
          "The decoding step: packed (packed weights, fused kernels) or "
          "libtorch (the model's own step).");
ABSL_FLAG(std::string, compute_type, "int8",
          "The step's arithmetic (SelectDecoder): on the CPU, int8 (weights "
          "per output feature, inputs per row; as good on dev, "
          "docs/quality.md) or float32 in the packed step, float32 or "
          "bfloat16 in --cpu_decoder libtorch; on a GPU float32 (int8 too), "
          "float16 or bfloat16.");
ABSL_FLAG(std::string, device, "cpu",
          "cpu, cuda or auto; on a GPU the model's own LibTorch step decodes "
          "(--cpu_decoder is the CPU's).");
ABSL_FLAG(int, repeats, 3, "Timed runs per mode; medians are reported.");
ABSL_FLAG(std::string, json, "", "Also write the results as JSON here.");
ABSL_FLAG(std::string, dump_dir, "",
          "Write sources.ids and MODE.ids (the decoded target ids) here, "
          "for bench/check_agreement.py.");

namespace {

int Run() {
  fanyi::BenchmarkOptions options;
  options.threads = absl::GetFlag(FLAGS_threads);
  options.workers = absl::GetFlag(FLAGS_workers);
  options.repeats = absl::GetFlag(FLAGS_repeats);
  if (absl::GetFlag(FLAGS_length_penalty) >= 0) {
    options.length_penalty = absl::GetFlag(FLAGS_length_penalty);
  }
  options.cpu_decoder = absl::GetFlag(FLAGS_cpu_decoder);
  options.compute_type = absl::GetFlag(FLAGS_compute_type);
  options.beam_stops_early = absl::GetFlag(FLAGS_beam_stops_early);
  options.cuda_graphs = absl::GetFlag(FLAGS_cuda_graphs);
  options.cuda_graph_after_steps = absl::GetFlag(FLAGS_cuda_graph_after_steps);
  options.device_steps = absl::GetFlag(FLAGS_device_steps);
  options.graph_dry_run = absl::GetFlag(FLAGS_graph_dry_run);
  options.device = absl::GetFlag(FLAGS_device);
  const auto modes = fanyi::ParseBenchmarkModes(
      absl::GetFlag(FLAGS_modes), absl::GetFlag(FLAGS_batch_size),
      absl::GetFlag(FLAGS_beam_size), absl::GetFlag(FLAGS_reference_sentences));
  auto benchmark =
      fanyi::DecodingBenchmark::Load(absl::GetFlag(FLAGS_model_dir), options);

  std::vector<std::string> texts =
      fanyi::ReadSourceTexts(absl::GetFlag(FLAGS_input));
  const int64_t max_sentences = absl::GetFlag(FLAGS_max_sentences);
  if (max_sentences > 0 && static_cast<int64_t>(texts.size()) > max_sentences) {
    texts.resize(max_sentences);
  }
  benchmark->SetSources(texts);
  std::cout << "model " << benchmark->model_version() << ", LibTorch "
            << fanyi::LibTorchVersion() << ", " << benchmark->device_name()
            << ", " << options.threads << " threads, " << options.workers
            << " worker(s), " << benchmark->sources().size() << " sources ("
            << benchmark->skipped() << " skipped), median of "
            << options.repeats << " runs\n";

  const std::string dump_dir = absl::GetFlag(FLAGS_dump_dir);
  if (!dump_dir.empty()) {
    std::filesystem::create_directories(dump_dir);
    std::vector<std::vector<int64_t>> source_ids;
    for (const auto& source : benchmark->sources()) {
      source_ids.push_back(source.ids);
    }
    fanyi::WriteIdLines(dump_dir + "/sources.ids", benchmark->sources(),
                        source_ids);
  }
  std::vector<fanyi::ModeTiming> timings;
  for (const fanyi::BenchmarkMode& mode : modes) {
    timings.push_back(benchmark->Time(mode));
    const fanyi::ModeTiming& timing = timings.back();
    std::cerr << mode.name << ": " << timing.median_seconds << " s";
    if (options.graph_dry_run ||
        (options.cuda_graphs && benchmark->device_name() != "cpu")) {
      std::cerr << (options.graph_dry_run ? ", CUDA graphs (dry run): "
                                          : ", CUDA graphs: ")
                << timing.graph_captures << " captured, "
                << timing.graph_replays << " of " << timing.graph_steps
                << " steps replayed"
                << (timing.graph_failure.empty() ? "" : ", ")
                << timing.graph_failure;
    }
    std::cerr << "\n";
    if (!dump_dir.empty()) {
      fanyi::WriteIdLines(dump_dir + "/" + mode.name + ".ids",
                          benchmark->sources(), timings.back().targets);
    }
  }
  std::cout << fanyi::FormatTimingTable(timings);
  if (!absl::GetFlag(FLAGS_json).empty()) {
    std::ofstream out(absl::GetFlag(FLAGS_json));
    out << fanyi::TimingsToJson(*benchmark, timings).dump(2) << "\n";
    if (!out)
      throw std::runtime_error("cannot write " + absl::GetFlag(FLAGS_json));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  fanyi::EnsureCpuThreadingEnvironment(argv);
  fanyi::KeepFreedMemoryForReuse();
  absl::SetProgramUsageMessage(
      "Times fanyi's decoders on a source file (no gRPC).\n"
      "  fanyi-bench --model_dir models/en-zh --input dev.tsv --threads 2 "
      "--json bench.json");
  absl::ParseCommandLine(argc, argv);
  try {
    return Run();
  } catch (const std::exception& error) {
    std::cerr << "fanyi-bench: " << error.what() << "\n";
    return 1;
  }
}
