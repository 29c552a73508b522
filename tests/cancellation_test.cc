// Deadlines and cancellation through a real TranslationServer on 127.0.0.1,
// for greedy requests and for the server's default beam (4): a request whose
// deadline passes, or whose caller cancels it, while it decodes gets its
// status and its rows stop taking decoding steps, which the next request
// then gets. Decoding steps are read from /metrics (fanyi_batch_size_sum:
// rows summed over steps).
//
// The model is made slow on purpose: random weights, wider and deeper than
// the tiny trained model, with the generator's </s> bias at -1e4 so that
// every sentence decodes to its length limit. The test times one whole
// translation of each kind first and sets its deadlines and cancellations
// as fractions of that, so it holds on fast and slow machines alike; a
// server that decoded a request to its end would use all of its row-steps,
// and the tests allow at most three quarters.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
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

// Row-steps of a translation stopped early, at most, as a share of a whole
// one: the deadline falls at a quarter of a translation (and a cancellation
// right after the first step), so a server running three times faster than
// when it was timed still passes, and one that decodes to the end fails.
constexpr double kMaxShareUsed = 0.75;

// The beams tested: greedy, and the server's default.
constexpr int kGreedy = 1;
constexpr int kDefaultBeam = 4;

class CancellationTest : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    ServerOptions options;
    options.model_dir = MakeSlowCheckpoint();
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    // One text decodes at a time, greedy or with the default beam.
    options.max_batch_size = kDefaultBeam;
    options.beam_size = kDefaultBeam;
    options.max_beam_size = kDefaultBeam;
    options.max_batch_delay_ms = 0;
    // The whole text is one row, translated to the length cap, once: the
    // output guard would decode it again, as it reaches the cap.
    options.max_sentence_tokens = 128;
    options.output_guard = false;
    options.threads = 1;
    options.device = "cpu";
    server_ = TranslationServer::Start(options).release();
    stub_ = v1::Translator::NewStub(
                grpc::CreateChannel(
                    "127.0.0.1:" + std::to_string(server_->grpc_port()),
                    grpc::InsecureChannelCredentials()))
                .release();
    // One whole translation of each kind, timed: the yardsticks below.
    for (int beam : {kGreedy, kDefaultBeam}) {
      const double before = RowSteps();
      const Clock::time_point start = Clock::now();
      v1::TranslateResponse response;
      const grpc::Status status =
          Translate(LongText(), Beam(beam), 600000, &response);
      Whole& whole = wholes_[beam];
      whole.time = Clock::now() - start;
      ASSERT_TRUE(status.ok()) << status.error_message();
      whole.tokens = response.translation().generated_token_count();
      whole.row_steps = RowSteps() - before;
      std::cout << "beam " << beam << ": one translation of " << whole.tokens
                << " tokens, " << whole.row_steps << " row-steps, in "
                << std::chrono::duration<double, std::milli>(whole.time).count()
                << " ms" << std::endl;
    }
  }
  static void TearDownTestSuite() {
    delete stub_;
    delete server_;
  }

  // The request's beam_size field: 0 asks for the server's default.
  static int Beam(int beam) { return beam == kDefaultBeam ? 0 : beam; }

  static grpc::Status Translate(const std::string& text, int beam_size,
                                int64_t deadline_ms,
                                v1::TranslateResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(deadline_ms));
    v1::TranslateRequest request;
    request.set_text(text);
    request.set_beam_size(beam_size);
    return stub_->Translate(&context, request, response);
  }

  // Rows summed over all decoding steps so far.
  static double RowSteps() {
    return std::max(0.0,
                    MetricValue(HttpGet(server_->metrics_port(), "/metrics"),
                                "fanyi_batch_size_sum{model=\"en-zh\"}"));
  }

  // Row-steps once the server has answered every RPC it received. A
  // cancelled or expired call is answered when its rows leave the decoder,
  // after their last step was counted, so nothing adds to these any more.
  // Fails the test if calls are still open after 30 s.
  static double RowStepsOnceIdle() {
    const Clock::time_point give_up = Clock::now() + std::chrono::seconds(30);
    while (true) {
      const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
      if (MetricValue(metrics, "fanyi_requests_in_flight") == 0 ||
          Clock::now() >= give_up) {
        EXPECT_EQ(MetricValue(metrics, "fanyi_requests_in_flight"), 0)
            << "calls still open after 30 s";
        return std::max(
            0.0, MetricValue(metrics, "fanyi_batch_size_sum{model=\"en-zh\"}"));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // A whole translation of the tested kind.
  struct Whole {
    Clock::duration time{};
    int64_t tokens = 0;
    double row_steps = 0;
  };
  static const Whole& whole() { return wholes_[GetParam()]; }
  static int64_t WholeTimeMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(whole().time)
        .count();
  }

  static TranslationServer* server_;
  static v1::Translator::Stub* stub_;
  static std::map<int, Whole> wholes_;
};

TranslationServer* CancellationTest::server_ = nullptr;
v1::Translator::Stub* CancellationTest::stub_ = nullptr;
std::map<int, CancellationTest::Whole> CancellationTest::wholes_;

TEST_P(CancellationTest, SlowModelDecodesToTheLengthLimit) {
  // What the other tests rely on: a sentence takes 2 * 100 + 10 steps, each
  // with one row per beam.
  EXPECT_EQ(whole().tokens, 2 * kSourceWords + 10);
  EXPECT_EQ(whole().row_steps, GetParam() * (2 * kSourceWords + 10));
}

TEST_P(CancellationTest, DeadlinePassingDuringDecodingStopsTheRows) {
  const double before = RowStepsOnceIdle();
  v1::TranslateResponse response;
  const grpc::Status status =
      Translate(LongText(), Beam(GetParam()),
                std::max<int64_t>(1, WholeTimeMs() / 4), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << status.error_message();
  const double used = RowStepsOnceIdle() - before;
  std::cout << "deadline at a quarter of a translation: " << used << " of "
            << whole().row_steps << " row-steps decoded" << std::endl;
  EXPECT_LE(used, kMaxShareUsed * whole().row_steps);

  // The server counted it (when its rows left, so by now), and the next
  // request decodes in full.
  EXPECT_GE(MetricValue(HttpGet(server_->metrics_port(), "/metrics"),
                        "fanyi_requests_total{code=\"DEADLINE_EXCEEDED\","
                        "method=\"Translate\",model=\"en-zh\"}"),
            1);
  EXPECT_TRUE(Translate("hello", Beam(GetParam()), 60000, &response).ok());
}

TEST_P(CancellationTest, CancelledCallFreesItsRowsForTheNextRequest) {
  const double before = RowStepsOnceIdle();

  // Started asynchronously so that this thread can cancel it.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::minutes(10));
  v1::TranslateRequest request;
  request.set_text(LongText());
  request.set_beam_size(Beam(GetParam()));
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
  std::future<grpc::Status> status = done.get_future();
  if (status.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    // Fail by assertion, not by hanging; the callback may still come, into
    // this frame, so the process ends here.
    ADD_FAILURE() << "the cancelled call got no answer within 60 s";
    std::_Exit(1);
  }
  EXPECT_EQ(status.get().error_code(), grpc::StatusCode::CANCELLED);

  const double used = RowStepsOnceIdle() - before;
  std::cout << "cancelled while decoding: " << used << " of "
            << whole().row_steps << " row-steps decoded" << std::endl;
  EXPECT_LE(used, kMaxShareUsed * whole().row_steps);
  // The rows are free: a request sent now is decoded, and only its steps
  // run.
  v1::TranslateResponse next;
  ASSERT_TRUE(Translate("hello", Beam(GetParam()), 60000, &next).ok());
  const double next_row_steps = RowStepsOnceIdle() - before - used;
  EXPECT_GE(next_row_steps, next.translation().generated_token_count());
  EXPECT_LE(next_row_steps,
            GetParam() * (next.translation().generated_token_count() + 1));
}

INSTANTIATE_TEST_SUITE_P(GreedyAndDefaultBeam, CancellationTest,
                         ::testing::Values(kGreedy, kDefaultBeam),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == kGreedy ? "Greedy"
                                                        : "DefaultBeam";
                         });

}  // namespace
}  // namespace fanyi
