#include "bench/benchmark_report.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace fanyi {

std::vector<std::string> ReadSourceTexts(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::string> texts;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A TSV's source is its first column; a plain file has no tab at all.
    texts.push_back(line.substr(0, line.find('\t')));
  }
  return texts;
}

void WriteIdLines(const std::string& path,
                  const std::vector<BenchmarkSource>& sources,
                  const std::vector<std::vector<int64_t>>& rows) {
  if (rows.size() > sources.size()) {
    throw std::invalid_argument("more rows than sources for " + path);
  }
  std::ofstream out(path, std::ios::trunc);
  for (size_t i = 0; i < rows.size(); ++i) {
    out << sources[i].line << '\t';
    for (size_t k = 0; k < rows[i].size(); ++k) {
      out << (k ? " " : "") << rows[i][k];
    }
    out << '\n';
  }
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

std::string FormatTimingTable(const std::vector<ModeTiming>& timings) {
  std::string table;
  char line[256];
  std::snprintf(line, sizeof(line), "%-14s %9s %9s %10s %12s %14s\n", "mode",
                "sentences", "tokens", "median s", "sentences/s",
                "tgt tokens/s");
  table += line;
  for (const ModeTiming& timing : timings) {
    std::snprintf(
        line, sizeof(line), "%-14s %9lld %9lld %10.3f %12.1f %14.1f\n",
        timing.mode.name.c_str(), static_cast<long long>(timing.sentences),
        static_cast<long long>(timing.target_tokens), timing.median_seconds,
        timing.sentences_per_second, timing.tokens_per_second);
    table += line;
  }
  return table;
}

nlohmann::json TimingsToJson(const DecodingBenchmark& benchmark,
                             const std::vector<ModeTiming>& timings) {
  nlohmann::json modes = nlohmann::json::array();
  for (const ModeTiming& timing : timings) {
    modes.push_back({
        {"name", timing.mode.name},
        {"batch_size", timing.mode.batch_size},
        {"beam_size", timing.mode.beam_size},
        {"sentences", timing.sentences},
        {"target_tokens", timing.target_tokens},
        {"seconds", timing.seconds},
        {"median_seconds", timing.median_seconds},
        {"sentences_per_second", timing.sentences_per_second},
        {"target_tokens_per_second", timing.tokens_per_second},
    });
  }
  return {
      {"engine", "fanyi"},
      {"libtorch", LibTorchVersion()},
      {"model_version", benchmark.model_version()},
      {"device", benchmark.device_name()},
      {"threads", benchmark.options().threads},
      {"workers", benchmark.options().workers},
      {"repeats", benchmark.options().repeats},
      {"length_penalty", benchmark.length_penalty()},
      {"sources", benchmark.sources().size()},
      {"skipped", benchmark.skipped()},
      {"modes", modes},
  };
}

}  // namespace fanyi
