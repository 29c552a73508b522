#ifndef FANYI_CLIENT_LOAD_OPTIONS_H_
#define FANYI_CLIENT_LOAD_OPTIONS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "server/tls_files.h"

namespace fanyi {

// Settings for a LoadGenerator, validated by its constructor. A run is always
// bounded: by `requests`, by `duration_s`, or by both (whichever comes first),
// and never issues requests for longer than kMaxDurationS.
struct LoadOptions {
  // Hard limits that no option can exceed.
  static constexpr double kMaxDurationS = 3600;  // Longest issuing phase.
  static constexpr int kMaxInFlight = 10000;     // Most requests in flight.

  std::string server;  // Required: "host:port" of the fanyi-server to load.
                       // Only this address is ever contacted.
  std::vector<std::string> texts;  // Required: source texts, sent in order and
                                   // cycled; each must be non-empty.
  int concurrency = 8;      // Closed loop: requests kept in flight. Also the
                            // concurrency of the warmup phase.
  int64_t requests = 1000;  // Measured requests to send; 0 = no count limit
                            // (then duration_s must be set).
  double duration_s = 0;    // Stop issuing after this many seconds; 0 = no
                            // time limit other than kMaxDurationS.
  double rate = 0;  // Open loop when > 0: offered load in requests/s with
                    // Poisson arrivals (exponential gaps), sent on schedule
                    // whatever the responses do. 0 = closed loop.
  int max_in_flight = kMaxInFlight;  // Open loop safety cap: a request due
                                     // while this many are in flight waits
                                     // for one to finish.
  uint64_t seed = 1;                 // Seeds the open loop's arrival times.
  int beam_size = 0;                 // Per request; 0 = the server's default.
  // The served model every request names (fanyi.v1.ModelChoice); empty
  // fields name nothing (a server with one model needs none).
  std::string source_language;
  std::string target_language;
  int timeout_ms = 10000;         // Deadline of each request.
  int64_t warmup_requests = 0;    // Sent (closed loop) before the measured
                                  // phase and left out of the report.
  int sentences_per_request = 1;  // Each request's text joins this many
                                  // consecutive texts with a space: a
                                  // document, when the texts are sentences.
  bool bursts = false;  // Closed loop in bursts: `concurrency` requests sent
                        // together, the next burst once the last of them
                        // has finished. requests and warmup_requests must
                        // then be multiples of concurrency.
  // What the texts are: "text" or "html" (TranslateRequest.format).
  std::string format = "text";
  // LibreTranslate's POST /translate (JSON, kept-alive connections, one per
  // request in flight) on `server` instead of gRPC; needs source_language
  // and target_language. Plaintext only.
  bool http = false;
  bool use_tls = false;  // TLS even without files (system root certificates).
  TlsFiles tls;          // TLS files (ca, client cert and key); any given
                         // file implies TLS. All empty: plaintext.
};

// Throws std::invalid_argument ("load generator: ...") naming the first
// option of `options` that is out of range, or that contradicts another.
void ValidateLoadOptions(const LoadOptions& options);

// Source texts from a file: one per line; of a tab-separated line (a corpus
// like dev.tsv) only the part before the first tab. Blank lines are skipped.
// Throws std::runtime_error if the file cannot be read or has no text.
std::vector<std::string> ReadSourceTexts(const std::string& path);

}  // namespace fanyi

#endif  // FANYI_CLIENT_LOAD_OPTIONS_H_
