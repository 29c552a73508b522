// Deadlines and cancellation through a real TranslationServer on 127.0.0.1:
// a request whose deadline passes, or whose caller cancels it, while it
// decodes gets its status and its row stops taking decoding steps, which the
// next request then gets. Decoding steps are read from /metrics
// (fanyi_batch_size_sum: rows summed over steps).
//
// The model is made slow on purpose: random weights, wider and deeper than
// the tiny trained model, with the generator's </s> bias at -1e4 so that
// every row decodes to its length limit. The test times one whole
// translation first and sets its deadlines and cancellations as fractions of
// that, so it holds on fast and slow machines alike.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "common/model/checkpoint.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::HttpGet;
using testing_util::MetricValue;
using Clock = std::chrono::steady_clock;

constexpr int kSourceWords = 100;

// kSourceWords words: the server allows 2 * 100 + 10 = 210 target tokens.
std::string LongText() {
  std::string text;
  for (int i = 0; i < kSourceWords; ++i) text += i == 0 ? "hello" : " hello";
  return text;
}

// A checkpoint with the tiny trained model's vocabularies and a slow random
// model that never ends a row early.
std::string MakeSlowCheckpoint() {
  const std::string work = testing_util::MakeTempDir("cancellation_test");
  Checkpoint checkpoint =
      LoadCheckpoint(testing_util::TrainTinyModel(work), torch::kCPU);
  ModelConfig config;
  config.source_vocab_size = checkpoint.source_vocabulary.size();
  config.target_vocab_size = checkpoint.target_vocabulary.size();
  config.encoder_layers = 2;
  config.decoder_layers = 6;
  config.d_model = 256;
  config.d_ff = 1024;
  config.heads = 4;
  config.dropout = 0;
  config.max_positions = 256;
  config.tie_target_embeddings = false;
  checkpoint.model = Transformer(config);
  checkpoint.model->eval();
  {
    torch::NoGradGuard no_grad;
    checkpoint.model->named_parameters()["generator.bias"][Vocabulary::kEosId]
        .fill_(-1e4);
  }
  checkpoint.model_version = "slow-random";
  const std::string directory = work + "/slow_model";
  SaveCheckpoint(checkpoint, directory);
  return directory;
}

class CancellationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ServerOptions options;
    options.model_dir = MakeSlowCheckpoint();
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.max_batch_size = 1;  // One row decodes at a time.
    // Greedy rows decode a step at a time and can leave between steps; a beam
    // search batch is decoded whole.
    options.beam_size = 1;
    options.max_batch_delay_ms = 0;
    options.max_input_tokens = 128;
    options.threads = 1;
    options.device = "cpu";
    server_ = TranslationServer::Start(options).release();
    stub_ = v1::Translator::NewStub(
                grpc::CreateChannel(
                    "127.0.0.1:" + std::to_string(server_->grpc_port()),
                    grpc::InsecureChannelCredentials()))
                .release();
    // One whole translation, timed: the yardstick for deadlines below.
    const Clock::time_point start = Clock::now();
    v1::TranslateResponse response;
    const grpc::Status status = Translate(LongText(), 600000, &response);
    full_time_ = new Clock::duration(Clock::now() - start);
    ASSERT_TRUE(status.ok()) << status.error_message();
    full_steps_ = response.translation().generated_token_count();
    std::cout << "one translation: " << full_steps_ << " tokens in "
              << std::chrono::duration<double, std::milli>(*full_time_).count()
              << " ms" << std::endl;
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete server_;
    delete full_time_;
  }

  static grpc::Status Translate(const std::string& text, int64_t deadline_ms,
                                v1::TranslateResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(deadline_ms));
    v1::TranslateRequest request;
    request.set_text(text);
    return stub_->Translate(&context, request, response);
  }

  // Rows summed over all decoding steps so far.
  static double RowSteps() {
    return std::max(0.0,
                    MetricValue(HttpGet(server_->metrics_port(), "/metrics"),
                                "fanyi_batch_size_sum"));
  }

  // Row-steps once they have stopped growing (checked over `quiet`); fails
  // the test if they keep growing for 30 s.
  static double SettledRowSteps(std::chrono::milliseconds quiet) {
    double steps = RowSteps();
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < give_up) {
      std::this_thread::sleep_for(quiet);
      const double now = RowSteps();
      if (now == steps) return steps;
      steps = now;
    }
    ADD_FAILURE() << "decoding steps still growing after 30 s";
    return steps;
  }

  static int64_t FullTimeMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(*full_time_)
        .count();
  }

  static TranslationServer* server_;
  static v1::Translator::Stub* stub_;
  static Clock::duration* full_time_;
  static int64_t full_steps_;
};

TranslationServer* CancellationTest::server_ = nullptr;
v1::Translator::Stub* CancellationTest::stub_ = nullptr;
Clock::duration* CancellationTest::full_time_ = nullptr;
int64_t CancellationTest::full_steps_ = 0;

TEST_F(CancellationTest, SlowModelDecodesToTheLengthLimit) {
  // What the other tests rely on: a row takes 2 * 100 + 10 steps.
  EXPECT_EQ(full_steps_, 2 * kSourceWords + 10);
}

TEST_F(CancellationTest, DeadlinePassingDuringDecodingStopsTheRow) {
  const std::chrono::milliseconds quiet(
      std::max<int64_t>(50, FullTimeMs() / 10));
  const double before = SettledRowSteps(quiet);
  v1::TranslateResponse response;
  const grpc::Status status =
      Translate(LongText(), std::max<int64_t>(1, FullTimeMs() / 4), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << status.error_message();
  const double used = SettledRowSteps(quiet) - before;
  std::cout << "deadline at a quarter of a translation: " << used << " of "
            << full_steps_ << " steps decoded" << std::endl;
  EXPECT_LT(used, full_steps_);

  // The server counted it, and the next request decodes in full.
  const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_GE(MetricValue(metrics,
                        "fanyi_requests_total{code=\"DEADLINE_EXCEEDED\","
                        "method=\"Translate\"}"),
            1);
  EXPECT_TRUE(Translate("hello", 60000, &response).ok());
}

TEST_F(CancellationTest, CancelledCallFreesItsRowForTheNextRequest) {
  const std::chrono::milliseconds quiet(
      std::max<int64_t>(50, FullTimeMs() / 10));
  const double before = SettledRowSteps(quiet);

  // Started asynchronously so that this thread can cancel it.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::minutes(10));
  v1::TranslateRequest request;
  request.set_text(LongText());
  v1::TranslateResponse response;
  std::promise<grpc::Status> done;
  stub_->async()->Translate(
      &context, &request, &response,
      [&done](grpc::Status status) { done.set_value(std::move(status)); });
  // Cancel once it is decoding.
  const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
  while (RowSteps() == before && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GT(RowSteps(), before) << "the request never started decoding";
  context.TryCancel();
  EXPECT_EQ(done.get_future().get().error_code(), grpc::StatusCode::CANCELLED);

  const double used = SettledRowSteps(quiet) - before;
  std::cout << "cancelled while decoding: " << used << " of " << full_steps_
            << " steps decoded" << std::endl;
  EXPECT_LT(used, full_steps_);
  // The row is free: a request sent now is decoded, and only its steps run.
  v1::TranslateResponse next;
  ASSERT_TRUE(Translate("hello", 60000, &next).ok());
  EXPECT_EQ(SettledRowSteps(quiet) - before,
            used + next.translation().generated_token_count());
}

}  // namespace
}  // namespace fanyi
