// fanyi-loadgen: loads a fanyi-server with Translate requests (closed or open
// loop) and reports throughput and latency percentiles.

#include <cstdint>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/client_tls_flags.h"
#include "client/load_generator.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051",
          "Server address (host:port); the only address contacted.");
ABSL_FLAG(std::string, input, "",
          "File of English source texts, one per line, cycled; of a TSV line "
          "only the first column (so dev.tsv works as is). Required.");
ABSL_FLAG(int, concurrency, 8,
          "Closed loop: requests kept in flight (also used for warmup).");
ABSL_FLAG(std::optional<int64_t>, requests, std::nullopt,
          "Measured requests to send; 0 = no count limit. Default: 1000, or "
          "no count limit when --duration_s is given.");
ABSL_FLAG(double, duration_s, 0,
          "Stop issuing after this many seconds (at most 3600); with "
          "--requests, whichever comes first.");
ABSL_FLAG(double, rate, 0,
          "Open loop: offered load in requests/s with Poisson arrivals, sent "
          "on schedule regardless of responses (at most 10000 in flight). "
          "0 = closed loop.");
ABSL_FLAG(int, beam_size, 0,
          "Beam size per request (0: the server's default).");
ABSL_FLAG(int, timeout_ms, 10000, "Deadline per request in milliseconds.");
ABSL_FLAG(std::string, source_language, "",
          "The served model's source language, for a server with several "
          "models (with --target_language).");
ABSL_FLAG(std::string, target_language, "",
          "The served model's target language.");
ABSL_FLAG(int64_t, warmup_requests, 0,
          "Requests sent before measuring, left out of the report.");
ABSL_FLAG(int, sentences_per_request, 1,
          "Each request joins this many consecutive input lines with a space "
          "(a document of that many sentences).");
ABSL_FLAG(bool, bursts, false,
          "Closed loop in bursts: --concurrency requests sent together, the "
          "next burst once all have finished; reports burst latencies. "
          "--requests and --warmup_requests must be multiples of "
          "--concurrency.");
ABSL_FLAG(uint64_t, seed, 1, "Seed of the open loop's arrival times.");
ABSL_FLAG(std::string, format, "text",
          "What the input texts are: text or html.");
ABSL_FLAG(bool, http, false,
          "Load the HTTP API (POST /translate, JSON) at --server instead of "
          "gRPC; needs --source_language and --target_language.");
ABSL_FLAG(std::string, json, "", "Also write the report as JSON here.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Measures a fanyi-server's throughput and latency.\n"
      "Usage: fanyi-loadgen --server HOST:PORT --input FILE "
      "[--concurrency N | --rate R] [--requests N] [--duration_s S] ...");
  absl::ParseCommandLine(argc, argv);

  fanyi::LoadOptions options;
  options.server = absl::GetFlag(FLAGS_server);
  options.concurrency = absl::GetFlag(FLAGS_concurrency);
  options.duration_s = absl::GetFlag(FLAGS_duration_s);
  // A duration alone bounds the run; otherwise the count does (default 1000).
  const std::optional<int64_t> requests = absl::GetFlag(FLAGS_requests);
  options.requests = requests.value_or(options.duration_s > 0 ? 0 : 1000);
  options.rate = absl::GetFlag(FLAGS_rate);
  options.beam_size = absl::GetFlag(FLAGS_beam_size);
  options.source_language = absl::GetFlag(FLAGS_source_language);
  options.target_language = absl::GetFlag(FLAGS_target_language);
  options.timeout_ms = absl::GetFlag(FLAGS_timeout_ms);
  options.warmup_requests = absl::GetFlag(FLAGS_warmup_requests);
  options.seed = absl::GetFlag(FLAGS_seed);
  options.sentences_per_request = absl::GetFlag(FLAGS_sentences_per_request);
  options.bursts = absl::GetFlag(FLAGS_bursts);
  options.format = absl::GetFlag(FLAGS_format);
  options.http = absl::GetFlag(FLAGS_http);
  const fanyi::ClientTls tls = fanyi::ClientTlsFromFlags();
  options.use_tls = tls.use_tls;
  options.tls = tls.files;

  fanyi::LoadReport report;
  try {
    const std::string input = absl::GetFlag(FLAGS_input);
    if (input.empty()) throw std::invalid_argument("--input is required");
    options.texts = fanyi::ReadSourceTexts(input);
    report = fanyi::LoadGenerator(options).Run();
  } catch (const std::exception& e) {
    std::cerr << "fanyi-loadgen: " << e.what() << std::endl;
    return 1;
  }
  std::cout << report.ToTable();

  const std::string json_path = absl::GetFlag(FLAGS_json);
  if (!json_path.empty()) {
    std::ofstream json(json_path);
    json << report.ToJson();
    if (!json.flush()) {
      std::cerr << "fanyi-loadgen: cannot write " << json_path << std::endl;
      return 1;
    }
  }
  return 0;
}
