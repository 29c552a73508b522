#ifndef FANYI_BENCH_DECODING_BENCHMARK_H_
#define FANYI_BENCH_DECODING_BENCHMARK_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fanyi {

// The decoders the benchmark can time; all are fanyi's library functions,
// called directly (no Translator, no gRPC).
enum class DecodingAlgorithm {
  kGreedy,              // GreedyDecode: batched, key/value cache.
  kBeamSearch,          // Beam groups in the ContinuousDecoder (served).
  kGreedyWithoutCache,  // GreedyDecodeWithoutCache: the reference decoder.
};

// One timed configuration.
struct BenchmarkMode {
  std::string name;  // Label in reports and dump file names ("greedy_b32").
  DecodingAlgorithm algorithm = DecodingAlgorithm::kGreedy;
  int batch_size = 1;         // Sentences decoded together.
  int beam_size = 1;          // Hypotheses per sentence (beam search only).
  int64_t max_sentences = 0;  // Time only the first N sources; 0 = all.
};

// Settings of a DecodingBenchmark, validated by DecodingBenchmark::Load.
struct BenchmarkOptions {
  int threads = 2;  // CPU threads: intra-op threads of one decoding stream,
                    // or split evenly over `workers` streams.
  int workers = 1;  // Decoding streams, each taking the next batch (as the
                    // server's workers do); the reference decoder always
                    // runs one stream with all `threads`.
  int repeats = 3;  // Timed runs per mode; the median is reported.
  // GNMT α for beam search; unset: the model's own (as the server).
  std::optional<double> length_penalty;
  bool beam_stops_early = false;  // DecodingOptions::beam_stops_early.
  bool cuda_graphs = true;        // DecodingOptions::cuda_graphs.
  int64_t cuda_graph_after_steps =
      3;                       // DecodingOptions::cuda_graph_after_steps.
  int64_t device_steps = 0;    // TranslatorOptions::device_steps.
  bool graph_dry_run = false;  // DecodingOptions::graph_dry_run.
  std::string cpu_decoder = "packed";  // The step: "packed" or "libtorch"
                                       // (SelectDecoder).
  std::string compute_type = "int8";   // SelectDecoder's.
  std::string device = "cpu";  // "cpu", "cuda" or "auto" (ResolveDevice); on
                               // a GPU the model's own LibTorch step decodes.
};

// A source sentence that the translator's tokenizer accepted.
struct BenchmarkSource {
  int64_t line = 0;          // 1-based line of the input file.
  std::vector<int64_t> ids;  // Source ids without </s> (the decoder adds it).
};

// What timing one mode measured.
struct ModeTiming {
  BenchmarkMode mode;
  int64_t sentences = 0;        // Sentences decoded per run.
  int64_t target_tokens = 0;    // Generated tokens per run, </s> excluded.
  std::vector<double> seconds;  // Wall time of each run.
  double median_seconds = 0;
  double sentences_per_second = 0;  // sentences / median_seconds.
  double tokens_per_second = 0;     // target_tokens / median_seconds.
  // CUDA graphs (BenchmarkOptions::cuda_graphs), over every run and decoder:
  int64_t graph_captures = 0;  // graphs captured,
  int64_t graph_replays = 0;   // decoding steps replayed from one, of
  int64_t graph_steps = 0;     // every decoding step,
  std::string graph_failure;   // and why capturing failed, if it did.
  // Target ids of the last run, one per timed source, in source order.
  std::vector<std::vector<int64_t>> targets;
};

// Times fanyi's decoders on a fixed list of sources. Sources are tokenized
// once up front, exactly as the Translator does, so that tokenization is not
// timed (the CTranslate2 side is fed the same ids). Keeps torch out of this
// header so that a main with absl flags can include it.
class DecodingBenchmark {
 public:
  // Loads the checkpoint in `model_dir` onto `options.device` and sets the
  // thread count; throws std::runtime_error / std::invalid_argument on bad
  // input.
  static std::unique_ptr<DecodingBenchmark> Load(
      const std::string& model_dir, const BenchmarkOptions& options);
  ~DecodingBenchmark();

  // Tokenizes `texts` (line i is texts[i - 1]); texts the translator refuses
  // (no tokens, longer than the model) are left out and counted in skipped().
  void SetSources(const std::vector<std::string>& texts);

  // Decodes the sources `repeats` times with `mode`, batches of sources
  // sorted by length (as fanyi-eval and the server's batcher do, so padding
  // stays small), after one untimed warm-up batch.
  ModeTiming Time(const BenchmarkMode& mode);

  const std::vector<BenchmarkSource>& sources() const;
  int64_t skipped() const;
  const std::string& model_version() const;
  std::string device_name() const;  // "cpu" or "cuda:N".
  double length_penalty() const;    // The α beam search decodes with.
  const BenchmarkOptions& options() const;

 private:
  struct Impl;
  explicit DecodingBenchmark(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The modes named in `list` (comma-separated: greedy1, greedy, beam,
// reference): greedy at batch 1, greedy at `batch_size`, beam search of
// `beam_size` at `batch_size`, and the no-cache reference decoder at batch 1
// on the first `reference_sentences` sources. Throws std::invalid_argument
// for an unknown name or a size below 1.
std::vector<BenchmarkMode> ParseBenchmarkModes(const std::string& list,
                                               int batch_size, int beam_size,
                                               int64_t reference_sentences);

// The LibTorch version the benchmark was built against, for reports.
std::string LibTorchVersion();

}  // namespace fanyi

#endif  // FANYI_BENCH_DECODING_BENCHMARK_H_
