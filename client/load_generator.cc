#include "client/load_generator.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

#include "absl/status/status.h"

namespace fanyi {

namespace {

using Clock = std::chrono::steady_clock;

// The canonical name of a gRPC status code ("OK", "INVALID_ARGUMENT", ...);
// gRPC's codes are numbered like absl's.
std::string StatusCodeName(grpc::StatusCode code) {
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

double Seconds(Clock::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

Clock::duration FromSeconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(seconds));
}

// An HTTP answer as the gRPC status the server gives for the same outcome
// (server/http/libretranslate_api.cc maps them); 0: no answer.
grpc::Status HttpStatus(int status, const std::string& body) {
  switch (status) {
    case 200:
      return grpc::Status::OK;
    case 0:
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, body);
    case 400:
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, body);
    case 429:
      return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, body);
    case 503:
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, body);
    case 504:
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, body);
    default:
      return grpc::Status(grpc::StatusCode::UNKNOWN,
                          "HTTP " + std::to_string(status) + ": " + body);
  }
}

void Require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("load generator: " + message);
}

const LoadOptions& Validated(const LoadOptions& options) {
  Require(!options.server.empty(), "no server address (host:port) given");
  Require(!options.texts.empty(), "no source texts to send");
  for (size_t i = 0; i < options.texts.size(); ++i) {
    Require(!options.texts[i].empty(),
            "source text " + std::to_string(i) + " is empty");
  }
  Require(options.concurrency >= 1 &&
              options.concurrency <= LoadOptions::kMaxInFlight,
          "concurrency must be in [1, " +
              std::to_string(LoadOptions::kMaxInFlight) + "], got " +
              std::to_string(options.concurrency));
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
  Require(options.max_in_flight >= 1 &&
              options.max_in_flight <= LoadOptions::kMaxInFlight,
          "max_in_flight must be in [1, " +
              std::to_string(LoadOptions::kMaxInFlight) + "], got " +
              std::to_string(options.max_in_flight));
  Require(options.beam_size >= 0,
          "beam_size must be >= 0, got " + std::to_string(options.beam_size));
  Require(options.timeout_ms >= 1 && options.timeout_ms <= 3600 * 1000,
          "timeout_ms must be in [1, 3600000], got " +
              std::to_string(options.timeout_ms));
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
  Require(options.sentences_per_request >= 1 &&
              options.sentences_per_request <= 10000,
          "sentences_per_request must be in [1, 10000], got " +
              std::to_string(options.sentences_per_request));
  if (options.bursts) {
    Require(options.rate == 0, "bursts are a closed loop; rate must be 0");
    Require(options.requests % options.concurrency == 0 &&
                options.warmup_requests % options.concurrency == 0,
            "with bursts, requests and warmup_requests must be multiples of "
            "the concurrency (" +
                std::to_string(options.concurrency) + ")");
  }
  return options;
}

}  // namespace

// One asynchronous Translate call, owned by the completion queue (or the
// HTTP transport) from StartCall until it completes.
struct LoadGenerator::Call {
  grpc::ClientContext context;
  v1::TranslateResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<v1::TranslateResponse>>
      reader;
  Clock::time_point sent_at;
  bool measured = false;  // Part of the measured phase, not warmup.
  int64_t sentences = 0;  // Of an OK answer.
  int64_t generated_tokens = 0;
};

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

LoadGenerator::LoadGenerator(LoadOptions options)
    : options_(Validated(options)) {}

LoadGenerator::~LoadGenerator() = default;

LoadReport LoadGenerator::Run() {
  if (channel_ != nullptr || http_ != nullptr) {
    throw std::logic_error("LoadGenerator::Run called twice");
  }
  if (options_.http) {
    http_ = std::make_unique<HttpTransport>(
        options_.server, std::chrono::milliseconds(options_.timeout_ms));
    RunPhases();
    http_.reset();  // Every request has completed.
    return BuildReport();
  }
  channel_ = grpc::CreateChannel(
      options_.server, MakeChannelCredentials(options_.tls, options_.use_tls));
  // Connecting first keeps connection setup out of the first latencies.
  if (!channel_->WaitForConnected(
          std::chrono::system_clock::now() +
          std::chrono::milliseconds(options_.timeout_ms))) {
    throw std::runtime_error("cannot connect to " + options_.server +
                             " within " + std::to_string(options_.timeout_ms) +
                             " ms");
  }
  stub_ = v1::Translator::NewStub(channel_);
  completion_queue_ = std::make_unique<grpc::CompletionQueue>();
  std::thread poller(&LoadGenerator::PollCompletions, this);
  RunPhases();
  // Every call has completed, so the queue drains at once.
  completion_queue_->Shutdown();
  poller.join();
  return BuildReport();
}

void LoadGenerator::RunPhases() {
  if (options_.warmup_requests > 0) {
    Phase warmup;
    warmup.requests = options_.warmup_requests;
    RunPhase(warmup);
  }
  Phase measured;
  measured.measured = true;
  measured.requests = options_.requests;
  if (options_.duration_s > 0) measured.duration_s = options_.duration_s;
  measured.rate = options_.rate;
  RunPhase(measured);
}

void LoadGenerator::RunPhase(const Phase& phase) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop_at = start + FromSeconds(phase.duration_s);
  std::mt19937_64 random(options_.seed);
  std::exponential_distribution<double> gap_s(phase.rate > 0 ? phase.rate
                                                             : 1.0);
  // Open loop: arrival times follow a fixed schedule (a Poisson process),
  // each computed from the previous scheduled time, never from when a send
  // actually happened or a response came back.
  Clock::time_point next_send = start;
  int64_t sent = 0;
  while (phase.requests == 0 || sent < phase.requests) {
    if (phase.rate > 0) {
      next_send += FromSeconds(gap_s(random));
      if (next_send >= stop_at) break;
      std::this_thread::sleep_until(next_send);
    }
    if (options_.bursts) {
      if (Clock::now() >= stop_at || !ReserveBurst(stop_at)) break;
      for (int i = 0; i < options_.concurrency; ++i) StartCall(phase.measured);
      sent += options_.concurrency;
      continue;
    }
    if (Clock::now() >= stop_at || !ReserveSlot(phase, stop_at)) break;
    StartCall(phase.measured);
    ++sent;
  }
  if (phase.measured) {
    measure_start_ = start;
    issue_end_ = Clock::now();
    requests_sent_ = sent;
  }
  std::unique_lock<std::mutex> lock(mutex_);
  call_finished_.wait(lock, [this] { return in_flight_ == 0; });
}

bool LoadGenerator::ReserveSlot(const Phase& phase, Clock::time_point stop_at) {
  const bool open_loop = phase.rate > 0;
  const int limit = open_loop ? options_.max_in_flight : options_.concurrency;
  std::unique_lock<std::mutex> lock(mutex_);
  if (open_loop && phase.measured && in_flight_ >= limit) {
    ++max_in_flight_waits_;
  }
  if (!call_finished_.wait_until(lock, stop_at,
                                 [&] { return in_flight_ < limit; })) {
    return false;
  }
  ++in_flight_;
  return true;
}

bool LoadGenerator::ReserveBurst(Clock::time_point stop_at) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!call_finished_.wait_until(lock, stop_at,
                                 [this] { return in_flight_ == 0; })) {
    return false;
  }
  in_flight_ = options_.concurrency;
  burst_start_ = Clock::now();
  burst_failed_ = false;
  return true;
}

std::string LoadGenerator::NextText() {
  std::string text;
  for (int i = 0; i < options_.sentences_per_request; ++i) {
    if (i > 0) text += ' ';
    text += options_.texts[next_text_ % options_.texts.size()];
    ++next_text_;
  }
  return text;
}

void LoadGenerator::StartCall(bool measured) {
  auto call = std::make_unique<Call>();
  call->measured = measured;
  if (options_.http) {
    nlohmann::json body = {{"q", NextText()},
                           {"source", options_.source_language},
                           {"target", options_.target_language},
                           {"format", options_.format}};
    if (options_.beam_size > 0) body["beam_size"] = options_.beam_size;
    call->sent_at = Clock::now();
    Call* const pending = call.release();  // The transport's until done.
    http_->Send(body.dump(), [this, pending](int status, std::string answer) {
      std::unique_ptr<Call> done(pending);
      done->status = HttpStatus(status, answer);
      // The answer has no counts: a request's sentences are those sent.
      if (done->status.ok()) done->sentences = options_.sentences_per_request;
      RecordCompletion(std::move(done));
    });
    return;
  }
  call->context.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(options_.timeout_ms));
  v1::TranslateRequest request;
  request.set_text(NextText());
  request.set_format(options_.format == "html" ? v1::FORMAT_HTML
                                               : v1::FORMAT_TEXT);
  request.set_beam_size(options_.beam_size);
  request.mutable_model()->set_source_language(options_.source_language);
  request.mutable_model()->set_target_language(options_.target_language);
  call->sent_at = Clock::now();
  call->reader =
      stub_->AsyncTranslate(&call->context, request, completion_queue_.get());
  // The queue owns the call until PollCompletions takes it back.
  Call* tag = call.release();
  tag->reader->Finish(&tag->response, &tag->status, tag);
}

void LoadGenerator::PollCompletions() {
  void* tag = nullptr;
  bool ok = false;  // Always true for a unary Finish.
  while (completion_queue_->Next(&tag, &ok)) {
    std::unique_ptr<Call> call(static_cast<Call*>(tag));
    if (call->status.ok()) {
      const v1::Translation& translation = call->response.translation();
      call->sentences = std::max<int64_t>(1, translation.sentence_count());
      call->generated_tokens = translation.generated_token_count();
    }
    RecordCompletion(std::move(call));
  }
}

void LoadGenerator::RecordCompletion(std::unique_ptr<Call> call) {
  const Clock::time_point done = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
    if (call->measured) {
      ++requests_completed_;
      const double latency_ms = Seconds(done - call->sent_at) * 1000.0;
      ++status_counts_[call->status.error_code()];
      double& max_ms = status_max_latency_ms_[call->status.error_code()];
      max_ms = std::max(max_ms, latency_ms);
      if (call->status.ok()) {
        ok_latencies_ms_.push_back(latency_ms);
        sentences_ += call->sentences;
        generated_tokens_ += call->generated_tokens;
      } else {
        burst_failed_ = true;
      }
      last_completion_ = done;
      if (options_.bursts && in_flight_ == 0 && !burst_failed_) {
        ok_burst_latencies_ms_.push_back(Seconds(done - burst_start_) * 1000.0);
      }
    }
  }
  call_finished_.notify_all();
}

LoadReport LoadGenerator::BuildReport() {
  std::lock_guard<std::mutex> lock(mutex_);
  LoadReport report;
  report.mode = options_.rate > 0 ? "open" : "closed";
  report.concurrency = options_.concurrency;
  report.offered_rate = options_.rate;
  const double issue_seconds = Seconds(issue_end_ - measure_start_);
  report.send_rate = issue_seconds > 0 ? requests_sent_ / issue_seconds : 0;
  report.requests_sent = requests_sent_;
  report.requests_completed = requests_completed_;
  for (const auto& [code, count] : status_counts_) {
    report.status_counts[StatusCodeName(code)] = count;
  }
  for (const auto& [code, max_ms] : status_max_latency_ms_) {
    report.status_max_latency_ms[StatusCodeName(code)] = max_ms;
  }
  report.ok_requests = static_cast<int64_t>(ok_latencies_ms_.size());
  report.sentences = sentences_;
  report.generated_tokens = generated_tokens_;
  report.max_in_flight_waits = max_in_flight_waits_;
  report.wall_seconds = requests_completed_ > 0
                            ? Seconds(last_completion_ - measure_start_)
                            : issue_seconds;
  if (report.wall_seconds > 0) {
    report.requests_per_second = report.ok_requests / report.wall_seconds;
    report.sentences_per_second = report.sentences / report.wall_seconds;
    report.generated_tokens_per_second =
        report.generated_tokens / report.wall_seconds;
  }
  report.SummarizeLatencies(ok_latencies_ms_);
  report.SummarizeBursts(ok_burst_latencies_ms_);
  return report;
}

}  // namespace fanyi
