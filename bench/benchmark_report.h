#ifndef FANYI_BENCH_BENCHMARK_REPORT_H_
#define FANYI_BENCH_BENCHMARK_REPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/decoding_benchmark.h"

namespace fanyi {

// Source sentences of `path`: the first column of a TSV (source<TAB>target),
// or every line of a plain text file. Throws std::runtime_error when the
// file cannot be read.
std::vector<std::string> ReadSourceTexts(const std::string& path);

// Writes one line per row, "LINE<TAB>id id id", where LINE is the input line
// of the source the row belongs to: the exchange format with the Python
// agreement check and the CTranslate2 timing script, which read ids instead
// of re-tokenizing text. `rows` pairs with the first rows.size() sources.
void WriteIdLines(const std::string& path,
                  const std::vector<BenchmarkSource>& sources,
                  const std::vector<std::vector<int64_t>>& rows);

// A fixed-width table: mode, sentences, tokens, median seconds,
// sentences/s, target tokens/s.
std::string FormatTimingTable(const std::vector<ModeTiming>& timings);

// Everything measured, with the settings and versions that produced it.
nlohmann::json TimingsToJson(const DecodingBenchmark& benchmark,
                             const std::vector<ModeTiming>& timings);

}  // namespace fanyi

#endif  // FANYI_BENCH_BENCHMARK_REPORT_H_
