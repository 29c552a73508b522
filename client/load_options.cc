#include "client/load_options.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

void Require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("load generator: " + message);
}

void RequireInRange(const std::string& name, int64_t value, int64_t low,
                    int64_t high) {
  Require(value >= low && value <= high,
          name + " must be in [" + std::to_string(low) + ", " +
              std::to_string(high) + "], got " + std::to_string(value));
}

}  // namespace

void ValidateLoadOptions(const LoadOptions& options) {
  Require(!options.server.empty(), "no server address (host:port) given");
  Require(!options.texts.empty(), "no source texts to send");
  for (size_t i = 0; i < options.texts.size(); ++i) {
    Require(!options.texts[i].empty(),
            "source text " + std::to_string(i) + " is empty");
  }
  RequireInRange("concurrency", options.concurrency, 1,
                 LoadOptions::kMaxInFlight);
  Require(options.requests >= 0,
          "requests must be >= 0, got " + std::to_string(options.requests));
  Require(options.duration_s >= 0 &&
              options.duration_s <= LoadOptions::kMaxDurationS,
          "duration_s must be in [0, 3600], got " +
              std::to_string(options.duration_s));
  Require(options.requests > 0 || options.duration_s > 0,
          "neither a request count nor a duration bounds the run; set "
          "requests or duration_s");
  Require(options.rate >= 0 && std::isfinite(options.rate),
          "rate must be >= 0 requests/s, got " + std::to_string(options.rate));
  RequireInRange("max_in_flight", options.max_in_flight, 1,
                 LoadOptions::kMaxInFlight);
  Require(options.beam_size >= 0,
          "beam_size must be >= 0, got " + std::to_string(options.beam_size));
  RequireInRange("timeout_ms", options.timeout_ms, 1, 3600 * 1000);
  Require(options.warmup_requests >= 0,
          "warmup_requests must be >= 0, got " +
              std::to_string(options.warmup_requests));
  Require(options.format == "text" || options.format == "html",
          "format must be text or html, got " + options.format);
  Require(!options.http || (!options.source_language.empty() &&
                            !options.target_language.empty()),
          "http needs source_language and target_language");
  Require(
      !options.http || (!options.use_tls && options.tls.ca.empty() &&
                        options.tls.cert.empty() && options.tls.key.empty()),
      "http is plaintext only");
  RequireInRange("sentences_per_request", options.sentences_per_request, 1,
                 10000);
  if (options.bursts) {
    Require(options.rate == 0, "bursts are a closed loop; rate must be 0");
    Require(options.requests % options.concurrency == 0 &&
                options.warmup_requests % options.concurrency == 0,
            "with bursts, requests and warmup_requests must be multiples of "
            "the concurrency (" +
                std::to_string(options.concurrency) + ")");
  }
}

std::vector<std::string> ReadSourceTexts(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read source texts from " + path);
  std::vector<std::string> texts;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string text = line.substr(0, line.find('\t'));
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    texts.push_back(text);
  }
  if (texts.empty()) throw std::runtime_error(path + " has no source text");
  return texts;
}

}  // namespace fanyi
