#include "client/load_generator.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <thread>
#include <utility>

namespace fanyi {
namespace {

using Clock = std::chrono::steady_clock;

Clock::duration FromSeconds(double seconds) {
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(seconds));
}

// An HTTP answer as the gRPC status the server gives for the same outcome
// (HttpStatusOf in server/http/libretranslate_fields.cc maps them); 0: no
// answer.
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

LoadGenerator::LoadGenerator(LoadOptions options)
    : options_(std::move(options)) {
  ValidateLoadOptions(options_);
}

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
    std::lock_guard<std::mutex> lock(mutex_);
    return tally_.Report(options_);
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
  std::lock_guard<std::mutex> lock(mutex_);
  return tally_.Report(options_);
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
  const Clock::time_point issue_end = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  if (phase.measured) {
    tally_.SetIssued(start, issue_end, sent, max_in_flight_waits_);
  }
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
  tally_.StartBurst(Clock::now());
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
      tally_.Record(call->status.error_code(), call->sent_at, done,
                    call->sentences, call->generated_tokens,
                    options_.bursts && in_flight_ == 0);
    }
  }
  call_finished_.notify_all();
}

}  // namespace fanyi
