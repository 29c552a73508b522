// End-to-end tests of the translation server: a real TranslationServer (and
// the real fanyi-server / fanyi-client binaries) on 127.0.0.1:0 serving the
// tiny trained model, spoken to over gRPC and HTTP.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "client/health_check.h"
#include "common/formats/gettext_catalog.h"
#include "common/formats/po_reader.h"
#include "common/pipeline/translator.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "server/translation_server.h"
#include "tests/controlled_engine.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

constexpr int kMaxInputChars = 400;

using testing_util::BinaryPath;
using testing_util::CommandResult;
using testing_util::HttpGet;
using testing_util::MetricValue;
using testing_util::RunCommand;
using testing_util::WaitForMetric;

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Trained once per process: MakeTempDir empties the directory that
    // TrainTinyModel caches, so repeating both (--gtest_repeat) would lose it.
    if (model_dir_ == nullptr) {
      model_dir_ = new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("server_test_model")));
    }
    server_ = TranslationServer::Start(Options()).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static ServerOptions Options() {
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.max_input_chars = kMaxInputChars;
    options.max_batch_texts = 8;
    options.max_beam_size = 4;
    options.threads = 1;
    options.device = "cpu";
    // The tests count decoded sentences and metrics exactly: the tiny
    // model's loops are not decoded again, except where a test asks.
    options.output_guard = false;
    return options;
  }

  // A server of its own on the same model, with the options `adjust`
  // makes, and engines that `control` holds or fails.
  static std::unique_ptr<TranslationServer> StartControlled(
      testing_util::EngineControl& control,
      const std::function<void(ServerOptions&)>& adjust) {
    ServerOptions options = Options();
    options.engine_factory = [&control](const Translator& translator) {
      return control.NewEngine(translator);
    };
    adjust(options);
    return TranslationServer::Start(options);
  }

  static std::unique_ptr<v1::Translator::Stub> NewStub(int port) {
    return v1::Translator::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                            grpc::InsecureChannelCredentials()));
  }

  // Translates `text` with a 30 s deadline.
  static grpc::Status Translate(v1::Translator::Stub& stub,
                                const std::string& text,
                                v1::TranslateResponse* response,
                                int beam_size = 0) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    v1::TranslateRequest request;
    request.set_text(text);
    request.set_beam_size(beam_size);
    return stub.Translate(&context, request, response);
  }

  static grpc::Status TranslateBatch(v1::Translator::Stub& stub,
                                     const std::vector<std::string>& texts,
                                     v1::TranslateBatchResponse* response,
                                     int beam_size = 0) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    v1::TranslateBatchRequest request;
    request.set_beam_size(beam_size);
    for (const std::string& text : texts) request.add_texts(text);
    return stub.TranslateBatch(&context, request, response);
  }

  static std::string* model_dir_;
  static TranslationServer* server_;
};

std::string* ServerTest::model_dir_ = nullptr;
TranslationServer* ServerTest::server_ = nullptr;

const std::vector<std::string>& SampleTexts() {
  static const auto* texts = new std::vector<std::string>{
      "hello", "I like tea.", "Where is the station?", "Thank you very much.",
      "It is raining today."};
  return *texts;
}

TEST_F(ServerTest, TranslatesOneText) {
  auto stub = NewStub(server_->grpc_port());
  v1::TranslateResponse response;
  const grpc::Status status = Translate(*stub, "I like tea.", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // What the same checkpoint translates in process, with the server's
  // default beam: the server adds nothing and loses nothing.
  TranslatorOptions options;
  options.device = "cpu";
  TextOptions text_options;
  text_options.beam_size = TextLimits().default_beam_size;
  const TextTranslation expected =
      Translator::Load(*model_dir_, options)
          ->TranslateTexts({"I like tea."}, text_options)
          .at(0);
  EXPECT_EQ(response.translation().text(), expected.text);
  EXPECT_FALSE(expected.text.empty());
  EXPECT_EQ(response.translation().source_token_count(),
            expected.source_token_count);
  EXPECT_EQ(response.translation().generated_token_count(),
            expected.generated_token_count);
  EXPECT_EQ(response.model_version(), server_->model_version());
}

// Concurrent calls share decoding steps (continuous batching): the first
// call's step is held until the other 31 are queued, so the next step must
// take them in, as many as a batch has rows. Each answer is the one the
// text gets alone. Greedy requests and requests for the server's default
// beam (4 rows each) alike.
TEST_F(ServerTest, ConcurrentCallsShareStepsAndGetTheirOwnAnswers) {
  constexpr int kCalls = 32;
  testing_util::EngineControl control;
  control.GateNewEngines(true);
  const std::unique_ptr<TranslationServer> server =
      StartControlled(control, [](ServerOptions&) {});
  const int port = server->metrics_port();
  // Steps of more than 16 rows: all of them but the le="16" bucket.
  auto wide_steps = [](const std::string& metrics) {
    return std::max(0.0,
                    MetricValue(metrics,
                                "fanyi_batch_size_count{model=\"en-zh\"}")) -
           std::max(0.0, MetricValue(metrics,
                                     "fanyi_batch_size_bucket{le=\"16\","
                                     "model=\"en-zh\"}"));
  };
  for (const int beam_size : {1, 0}) {
    SCOPED_TRACE("beam_size " + std::to_string(beam_size));
    std::vector<std::string> alone;
    for (const std::string& text : SampleTexts()) {
      v1::TranslateResponse response;
      ASSERT_TRUE(
          Translate(*NewStub(server_->grpc_port()), text, &response, beam_size)
              .ok());
      alone.push_back(response.translation().text());
    }
    const double wide_before = wide_steps(HttpGet(port, "/metrics"));
    control.SetGateOpen(false);
    std::vector<grpc::Status> statuses(kCalls);
    std::vector<v1::TranslateResponse> responses(kCalls);
    std::vector<std::thread> callers;
    for (int i = 0; i < kCalls; ++i) {
      callers.emplace_back([&, i] {
        statuses[i] = Translate(*NewStub(server->grpc_port()),
                                SampleTexts()[i % SampleTexts().size()],
                                &responses[i], beam_size);
      });
      if (i == 0) ASSERT_TRUE(control.WaitForHeldSteps(1));
    }
    const std::string queued =
        WaitForMetric(port, "fanyi_queue_depth{model=\"en-zh\"}", kCalls - 1,
                      std::chrono::seconds(60));
    control.SetGateOpen(true);
    for (std::thread& caller : callers) caller.join();
    ASSERT_EQ(MetricValue(queued, "fanyi_queue_depth{model=\"en-zh\"}"),
              kCalls - 1);
    for (int i = 0; i < kCalls; ++i) {
      ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
      EXPECT_EQ(responses[i].translation().text(),
                alone[i % SampleTexts().size()])
          << i;
    }
    EXPECT_GE(wide_steps(HttpGet(port, "/metrics")) - wide_before, 1)
        << "the queued calls did not share a step";
  }
}

// A TranslateBatch whose second text the engine refuses fails as a whole,
// naming that text; the text queued behind it is cancelled, never decoded.
// One row a batch, so the texts go one at a time, in order.
TEST_F(ServerTest, ATranslateBatchFailsNamingTheTextAndCancelsTheRest) {
  const std::vector<std::string> texts = {
      "I like tea.", "Where is the station?", "Thank you very much."};
  TranslatorOptions translator_options;
  translator_options.device = "cpu";
  const std::unique_ptr<Translator> translator =
      Translator::Load(*model_dir_, translator_options);
  std::vector<std::vector<int64_t>> ids;
  for (const std::string& text : texts) {
    ids.push_back(translator->pipeline().EncodeSentence(text).ids);
  }
  testing_util::EngineControl control;
  control.SetRefusal(
      [refused = ids[1]](const Translator&, const EncodedSource& source) {
        return source.ids == refused;
      });
  const std::unique_ptr<TranslationServer> server =
      StartControlled(control, [](ServerOptions& options) {
        options.max_batch_size = 1;
        options.beam_size = 1;
        options.max_beam_size = 1;
      });
  v1::TranslateBatchResponse response;
  const grpc::Status status =
      TranslateBatch(*NewStub(server->grpc_port()), texts, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(status.error_message(),
            "texts[1]: translation failed: engine failure injected by the "
            "test");
  EXPECT_EQ(response.translations_size(), 0);
  const std::vector<std::vector<EncodedSource>> added = control.AddedByEngine();
  ASSERT_EQ(added.size(), 1u);
  ASSERT_EQ(added[0].size(), 1u) << "only the first text was decoded";
  EXPECT_EQ(added[0][0].ids, ids[0]);
  // Counted once, as the failure it was.
  EXPECT_EQ(MetricValue(HttpGet(server->metrics_port(), "/metrics"),
                        "fanyi_requests_total{code=\"INTERNAL\","
                        "method=\"TranslateBatch\",model=\"en-zh\"}"),
            1);
}

// testing_util::CopyFindingEverythingTooLong of `tiny_model`, made once.
std::string ModelFindingEverythingTooLong(const std::string& tiny_model) {
  static const std::string* dir =
      new std::string(testing_util::CopyFindingEverythingTooLong(tiny_model));
  return *dir;
}

// Training pairs, of six tokens and of three: the first is checked.
constexpr char kGuardedText[] = "He had a hungry look. Have fun.";

// A sentence whose translation the output guard finds broken is decoded
// again, with a beam of 4 that repeats no trigram, and the response and the
// metrics count it; with the guard off, it is counted and kept. The model's
// config here says its training pairs had 0.01 to 0.02 target tokens per
// source token, so the translation of any sentence of five tokens or more
// is too long.
TEST_F(ServerTest, BrokenTranslationsAreDecodedAgainAndCounted) {
  const std::string model = ModelFindingEverythingTooLong(*model_dir_);
  const std::string text = kGuardedText;
  for (const bool guard : {true, false}) {
    TranslatorOptions translator_options;
    translator_options.device = "cpu";
    translator_options.output_guard = guard;
    const std::unique_ptr<Translator> translator =
        Translator::Load(model, translator_options);
    const TextTranslation expected =
        translator->TranslateTexts({text}, TextOptions()).at(0);
    const EncodedSource first =
        translator->pipeline().PrepareText(text, TextOptions()).parts.at(0);

    testing_util::EngineControl control;
    const std::unique_ptr<TranslationServer> server =
        StartControlled(control, [&](ServerOptions& options) {
          options.model_dir = model;
          options.output_guard = guard;
        });
    ASSERT_TRUE(server != nullptr);
    v1::TranslateResponse response;
    // Greedy, as TranslateTexts' default options.
    ASSERT_TRUE(
        Translate(*NewStub(server->grpc_port()), text, &response, 1).ok());
    const v1::Translation& translation = response.translation();
    EXPECT_EQ(translation.text(), expected.text) << "guard " << guard;
    EXPECT_EQ(translation.broken_count(), 1);
    EXPECT_EQ(expected.broken_part_count, 1);
    EXPECT_EQ(translation.repaired_count(), expected.repaired_part_count);
    if (!guard) EXPECT_EQ(translation.repaired_count(), 0);
    int retries = 0;
    for (const auto& engine : control.AddedByEngine()) {
      for (const EncodedSource& source : engine) {
        if (source.no_repeat_ngram == 0) continue;
        ++retries;
        EXPECT_EQ(source.ids, first.ids);
        EXPECT_EQ(source.beam_size, 4);
        EXPECT_EQ(source.no_repeat_ngram, 3);
      }
    }
    EXPECT_EQ(retries, guard ? 1 : 0);
    const std::string metrics = HttpGet(server->metrics_port(), "/metrics");
    EXPECT_EQ(MetricValue(metrics,
                          "fanyi_broken_outputs_total{kind="
                          "\"too_long\",model=\"en-zh\"}"),
              1)
        << metrics;
    EXPECT_EQ(
        MetricValue(metrics, "fanyi_repaired_outputs_total{model=\"en-zh\"}"),
        translation.repaired_count());
  }
}

// A retry that fails (here its engine refuses it) leaves the first
// translation: the call succeeds, its sentence counted broken, not
// repaired.
TEST_F(ServerTest, ARetryThatFailsLeavesTheFirstTranslation) {
  TranslatorOptions translator_options;
  translator_options.device = "cpu";
  translator_options.output_guard = false;
  const std::string model = ModelFindingEverythingTooLong(*model_dir_);
  const TextTranslation first =
      Translator::Load(model, translator_options)
          ->TranslateTexts({kGuardedText}, TextOptions())
          .at(0);
  testing_util::EngineControl control;
  auto refused = std::make_shared<std::atomic<int>>(0);
  control.SetRefusal([refused](const Translator&, const EncodedSource& source) {
    if (source.no_repeat_ngram == 0) return false;
    ++*refused;
    return true;
  });
  const std::unique_ptr<TranslationServer> server =
      StartControlled(control, [&model](ServerOptions& options) {
        options.model_dir = model;
        options.output_guard = true;
      });
  v1::TranslateResponse response;
  const grpc::Status status =
      Translate(*NewStub(server->grpc_port()), kGuardedText, &response, 1);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.translation().text(), first.text);
  EXPECT_EQ(response.translation().broken_count(), 1);
  EXPECT_EQ(response.translation().repaired_count(), 0);
  EXPECT_EQ(refused->load(), 1);
}

// One document's sentences spread over two workers, each holding its share
// at a step at the same time; the answer is the one a single worker gives.
TEST_F(ServerTest, ADocumentSpreadOverTwoWorkersIsTranslatedWhole) {
  std::string document;
  for (int i = 0; i < 12; ++i) {
    document += (i > 0 ? " " : "") + SampleTexts()[1 + i % 4];
  }
  v1::TranslateResponse alone;
  ASSERT_TRUE(Translate(*NewStub(server_->grpc_port()), document, &alone).ok());

  testing_util::EngineControl control;
  control.GateNewEngines(true);
  control.SetGateOpen(false);
  const std::unique_ptr<TranslationServer> server =
      StartControlled(control, [](ServerOptions& options) {
        options.threads = 2;
        options.workers = 2;
      });
  v1::TranslateResponse spread;
  grpc::Status status;
  std::thread caller([&] {
    status = Translate(*NewStub(server->grpc_port()), document, &spread);
  });
  const bool both_held = control.WaitForHeldSteps(2);
  control.SetGateOpen(true);
  caller.join();
  ASSERT_TRUE(both_held) << "the two workers never decoded at once";
  ASSERT_TRUE(status.ok()) << status.error_message();
  const std::vector<std::vector<EncodedSource>> added = control.AddedByEngine();
  ASSERT_EQ(added.size(), 2u);
  EXPECT_EQ(added[0].size() + added[1].size(), 12u);
  EXPECT_GT(added[0].size(), 0u);
  EXPECT_GT(added[1].size(), 0u);
  EXPECT_EQ(spread.translation().text(), alone.translation().text());
  EXPECT_EQ(spread.translation().generated_token_count(),
            alone.translation().generated_token_count());
}

TEST_F(ServerTest, TranslateBatchKeepsOrderAndMatchesTranslate) {
  auto stub = NewStub(server_->grpc_port());
  v1::TranslateBatchResponse batch_response;
  const grpc::Status status =
      TranslateBatch(*stub, SampleTexts(), &batch_response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(batch_response.translations_size(),
            static_cast<int>(SampleTexts().size()));
  EXPECT_EQ(batch_response.model_version(), server_->model_version());
  for (size_t i = 0; i < SampleTexts().size(); ++i) {
    v1::TranslateResponse single;
    ASSERT_TRUE(Translate(*stub, SampleTexts()[i], &single).ok());
    const v1::Translation& batched = batch_response.translations(i);
    EXPECT_EQ(batched.text(), single.translation().text()) << SampleTexts()[i];
    EXPECT_EQ(batched.source_token_count(),
              single.translation().source_token_count());
    EXPECT_EQ(batched.generated_token_count(),
              single.translation().generated_token_count());
  }
}

TEST_F(ServerTest, BeamSizeIsChosenPerRequestAndCapped) {
  auto stub = NewStub(server_->grpc_port());
  const std::string text = SampleTexts()[2];
  v1::TranslateResponse greedy, default_beam, beam, capped;
  ASSERT_TRUE(Translate(*stub, text, &greedy, 1).ok());
  ASSERT_TRUE(Translate(*stub, text, &default_beam, 0).ok());
  ASSERT_TRUE(Translate(*stub, text, &beam, 4).ok());
  ASSERT_TRUE(Translate(*stub, text, &capped, 100).ok());
  EXPECT_EQ(greedy.beam_size(), 1);
  EXPECT_EQ(default_beam.beam_size(), 4);  // The server's default.
  EXPECT_EQ(beam.beam_size(), 4);
  EXPECT_EQ(default_beam.translation().text(), beam.translation().text());
  EXPECT_EQ(capped.beam_size(), 4);  // --max_beam_size.
  EXPECT_EQ(capped.translation().text(), beam.translation().text());

  v1::TranslateBatchResponse batch;
  ASSERT_TRUE(TranslateBatch(*stub, SampleTexts(), &batch, 4).ok());
  EXPECT_EQ(batch.beam_size(), 4);
  for (size_t i = 0; i < SampleTexts().size(); ++i) {
    v1::TranslateResponse single;
    ASSERT_TRUE(Translate(*stub, SampleTexts()[i], &single, 4).ok());
    EXPECT_EQ(batch.translations(i).text(), single.translation().text());
  }

  v1::TranslateResponse rejected;
  const grpc::Status status = Translate(*stub, text, &rejected, -1);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("beam_size"), std::string::npos);
}

std::string TooManyCharacters() {
  std::string text;
  while (text.size() <= kMaxInputChars) text += "tea ";
  return text;
}

TEST_F(ServerTest, InvalidTextsAreRejectedWithReasons) {
  struct Case {
    std::string name;
    std::string text;
    std::string message_part;  // Must appear in the error message.
  };
  const std::vector<Case> cases = {
      {"empty", "", "empty"},
      {"invalid UTF-8", std::string("caf\xC3\x28 \xFF", 7), "UTF-8"},
      {"too many characters", TooManyCharacters(), "characters"},
  };
  auto stub = NewStub(server_->grpc_port());
  for (const Case& test_case : cases) {
    v1::TranslateResponse response;
    const grpc::Status status = Translate(*stub, test_case.text, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << test_case.name;
    EXPECT_NE(status.error_message().find(test_case.message_part),
              std::string::npos)
        << test_case.name << ": " << status.error_message();

    // The same text inside a batch is reported with its index.
    v1::TranslateBatchResponse batch_response;
    const grpc::Status batch_status =
        TranslateBatch(*stub, {"hello", test_case.text}, &batch_response);
    EXPECT_EQ(batch_status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << test_case.name;
    EXPECT_NE(batch_status.error_message().find("texts[1]"), std::string::npos)
        << test_case.name << ": " << batch_status.error_message();
  }
}

// Sends `wire` as the request of `method` with a generic stub, as any
// client (bytes or string fields, any language) may: the server reads it.
grpc::Status CallRaw(int port, const std::string& method,
                     const std::string& wire) {
  grpc::GenericStub stub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  grpc::Slice slice(wire);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::mutex mutex;
  std::condition_variable done;
  std::optional<grpc::Status> result;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&](grpc::Status status) {
                   std::lock_guard<std::mutex> lock(mutex);
                   result = std::move(status);
                   done.notify_one();
                 });
  std::unique_lock<std::mutex> lock(mutex);
  done.wait(lock, [&] { return result.has_value(); });
  return *result;
}

// A length-delimited field `number` holding `bytes`, as on the wire.
std::string WireField(int number, const std::string& bytes) {
  std::string wire;
  for (unsigned tag = number << 3 | 2;; tag >>= 7) {  // A varint.
    wire.push_back(static_cast<char>(tag < 0x80 ? tag : (tag & 0x7F) | 0x80));
    if (tag < 0x80) break;
  }
  wire.push_back(static_cast<char>(bytes.size()));  // Under 128 here.
  return wire + bytes;
}

TEST_F(ServerTest, InvalidUtf8InAnyStringFieldIsNamedAsInvalidArgument) {
  const std::string bad("ab\xC3\x28", 4);  // Byte 2 starts a bad sequence.
  const std::string translate = "/fanyi.v1.Translator/Translate";
  const std::string batch = "/fanyi.v1.Translator/TranslateBatch";
  const struct {
    std::string method;
    std::string wire;
    std::string message;
  } cases[] = {
      {translate, WireField(1, bad), "text: invalid UTF-8 at byte 2"},
      {batch, WireField(1, "tea") + WireField(1, bad),
       "texts[1]: invalid UTF-8 at byte 2"},
      {translate,
       WireField(1, "tea") + WireField(4, WireField(1, "tea")) +
           WireField(4, WireField(1, "x") + WireField(2, bad)),
       "glossary[1].target: invalid UTF-8 at byte 2"},
      {batch, WireField(1, "tea") + WireField(5, bad),
       "do_not_translate[0]: invalid UTF-8 at byte 2"},
      {translate, WireField(1, "tea") + WireField(16, WireField(3, bad)),
       "model.model: invalid UTF-8 at byte 2"},
      {translate, "\xff\xff\xff",
       "the request is not a fanyi.v1.TranslateRequest message"},
  };
  for (const auto& c : cases) {
    const grpc::Status status = CallRaw(server_->grpc_port(), c.method, c.wire);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << c.message;
    EXPECT_EQ(status.error_message(), c.message);
  }
  // The same bytes with valid text translate: the wire format is the one
  // bytes fields had.
  EXPECT_TRUE(
      CallRaw(server_->grpc_port(), translate, WireField(1, "I like tea."))
          .ok());
}

TEST_F(ServerTest, SourceAutoDetectsTheLanguageAndSaysSo) {
  auto stub = NewStub(server_->grpc_port());
  const std::string text = "Good morning, how are you today?";
  v1::TranslateResponse plain;
  ASSERT_TRUE(Translate(*stub, text, &plain).ok());

  v1::TranslateRequest request;
  request.set_text(text);
  request.mutable_model()->set_source_language("auto");
  request.mutable_model()->set_target_language("zh");
  v1::TranslateResponse response;
  {
    grpc::ClientContext context;
    const grpc::Status status = stub->Translate(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_EQ(response.translation().text(), plain.translation().text());
  EXPECT_EQ(response.translation().detected_language().language(), "en");
  EXPECT_GT(response.translation().detected_language().confidence(), 50);
  EXPECT_FALSE(plain.translation().has_detected_language());

  // One call, one model: a batch in two languages is refused, naming them.
  v1::TranslateBatchRequest batch;
  batch.add_texts(text);
  batch.add_texts("今天天气很好，我们去公园散步吧。");
  batch.mutable_model()->set_source_language("auto");
  v1::TranslateBatchResponse batch_response;
  grpc::ClientContext context;
  const grpc::Status status =
      stub->TranslateBatch(&context, batch, &batch_response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("texts[1] reads as zh"),
            std::string::npos)
      << status.error_message();
}

TEST_F(ServerTest, EmptyOrOversizedBatchIsRejected) {
  auto stub = NewStub(server_->grpc_port());
  v1::TranslateBatchResponse response;
  EXPECT_EQ(TranslateBatch(*stub, {}, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  const std::vector<std::string> too_many(Options().max_batch_texts + 1,
                                          "hello");
  EXPECT_EQ(TranslateBatch(*stub, too_many, &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

// A deadline that passes while the text waits in the server's queue is
// answered by the server (counted in its metrics) and never decoded. The
// server holds texts for a full batch for 2 s, so the 300 ms deadline passes
// there, after the call has reached it.
TEST_F(ServerTest, DeadlinePassingInTheQueueIsAnsweredAndNotDecoded) {
  ServerOptions options = Options();
  options.max_batch_delay_ms = 2000;
  auto server = TranslationServer::Start(options);
  auto stub = NewStub(server->grpc_port());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(300));
  v1::TranslateRequest request;
  request.set_text("hello");
  v1::TranslateResponse response;
  EXPECT_EQ(stub->Translate(&context, request, &response).error_code(),
            grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server answers once the worker takes the text, at about 2 s.
  const std::string counted =
      "fanyi_requests_total{code=\"DEADLINE_EXCEEDED\",method=\"Translate\","
      "model=\"en-zh\"}";
  const std::string metrics = WaitForMetric(server->metrics_port(), counted, 1,
                                            std::chrono::seconds(30));
  EXPECT_EQ(MetricValue(metrics, counted), 1) << metrics;
  EXPECT_LE(MetricValue(metrics, "fanyi_batch_size_count{model=\"en-zh\"}"), 0)
      << "the expired text was decoded";
}

TEST_F(ServerTest, HealthCheckIsServing) {
  // HealthStatus reads "SERVING" only from the exact response bytes 08 01
  // (HealthCheckResponse{status: SERVING}).
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                          grpc::InsecureChannelCredentials());
  EXPECT_EQ(HealthStatus(channel, std::chrono::seconds(30)), "SERVING");
}

TEST_F(ServerTest, MetricsEndpointExposesEveryMetric) {
  // The counters move by what these two calls did, exactly (the suite's
  // tests run one at a time on the shared server).
  const std::string before = HttpGet(server_->metrics_port(), "/metrics");
  auto stub = NewStub(server_->grpc_port());
  v1::TranslateResponse response;
  ASSERT_TRUE(Translate(*stub, "hello. I like tea.", &response).ok());
  v1::TranslateResponse refused;
  Translate(*stub, "", &refused);  // Counted as INVALID_ARGUMENT.

  const std::string metrics = HttpGet(server_->metrics_port(), "/metrics");
  for (const char* name :
       {"fanyi_requests_total", "fanyi_request_duration_seconds",
        "fanyi_queue_wait_seconds", "fanyi_decode_duration_seconds",
        "fanyi_batch_size", "fanyi_generated_tokens_total", "fanyi_queue_depth",
        "fanyi_requests_in_flight", "fanyi_model_info", "fanyi_sentences_total",
        "fanyi_unknown_words_total", "fanyi_unplaced_spans_total",
        "fanyi_capped_translations_total", "fanyi_dropped_unknown_tokens_total",
        "fanyi_translation_confidence"}) {
    EXPECT_NE(metrics.find(std::string("# TYPE ") + name + " "),
              std::string::npos)
        << name << " missing from:\n"
        << metrics;
  }
  // A series absent before the first call counts from 0.
  auto moved = [&](const std::string& series) {
    return MetricValue(metrics, series) -
           std::max(0.0, MetricValue(before, series));
  };
  EXPECT_EQ(moved("fanyi_requests_total{code=\"OK\",method="
                  "\"Translate\",model=\"en-zh\"}"),
            1);
  EXPECT_EQ(moved("fanyi_requests_total{code=\"INVALID_ARGUMENT\","
                  "method=\"Translate\",model=\"en-zh\"}"),
            1);
  EXPECT_EQ(moved("fanyi_sentences_total{model=\"en-zh\"}"),
            response.translation().sentence_count());
  EXPECT_EQ(response.translation().sentence_count(), 2);
  EXPECT_EQ(moved("fanyi_generated_tokens_total{model=\"en-zh\"}"),
            response.translation().generated_token_count());
  EXPECT_EQ(moved("fanyi_queue_wait_seconds_count{model=\"en-zh\"}"), 2);
  EXPECT_EQ(moved("fanyi_translation_confidence_count{model=\"en-zh\"}"), 1);
  EXPECT_NEAR(moved("fanyi_translation_confidence_sum{model=\"en-zh\"}"),
              response.translation().confidence(), 1e-6);
  EXPECT_EQ(moved("fanyi_request_duration_seconds_count{method=\"Translate\","
                  "model=\"en-zh\"}"),
            2);
  EXPECT_EQ(MetricValue(metrics,
                        "fanyi_model_info{device=\"cpu\",model=\"en-zh\","
                        "repository_version=\"0\",version=\"" +
                            server_->model_version() + "\"}"),
            1);
  EXPECT_EQ(MetricValue(metrics, "fanyi_requests_in_flight"), 0);
}

TEST_F(ServerTest, PortInUseIsAStartupError) {
  ServerOptions options = Options();
  options.listen = "127.0.0.1:" + std::to_string(server_->grpc_port());
  try {
    TranslationServer::Start(options);
    FAIL() << "a second server started on a port in use";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(options.listen), std::string::npos)
        << e.what();
  }
}

TEST_F(ServerTest, BadModelDirIsAStartupError) {
  ServerOptions options = Options();
  options.model_dir = "/nonexistent/fanyi-model";
  try {
    TranslationServer::Start(options);
    FAIL() << "started without a model";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(options.model_dir), std::string::npos)
        << e.what();
  }
}

TEST_F(ServerTest, ShutdownDrainsQueuedRequestsThenRefusesNewOnes) {
  ServerOptions options = Options();
  // Requests would wait 10 minutes for a full batch: only the shutdown's
  // drain can flush them.
  options.max_batch_size = 64;
  options.max_batch_delay_ms = 600000;
  auto server = TranslationServer::Start(options);

  constexpr int kCalls = 4;
  std::vector<grpc::Status> statuses(kCalls);
  std::vector<v1::TranslateResponse> responses(kCalls);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCalls; ++i) {
    callers.emplace_back([&, i] {
      auto stub = NewStub(server->grpc_port());
      statuses[i] = Translate(*stub, SampleTexts()[i], &responses[i]);
    });
  }
  // Wait until all of them sit in the queue (a state, polled, not a delay;
  // a minute at most, so that a server decoding them early fails here).
  const double queued =
      MetricValue(WaitForMetric(server->metrics_port(),
                                "fanyi_queue_depth{model=\"en-zh\"}", kCalls,
                                std::chrono::seconds(60)),
                  "fanyi_queue_depth{model=\"en-zh\"}");
  if (queued < kCalls) {
    ADD_FAILURE() << "only " << queued << " of " << kCalls
                  << " requests ever queued together";
    std::_Exit(1);  // The caller threads still hold this frame's vectors.
  }
  server->Shutdown();
  for (std::thread& caller : callers) caller.join();
  for (int i = 0; i < kCalls; ++i) {
    EXPECT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    EXPECT_FALSE(responses[i].translation().text().empty());
  }

  auto stub = NewStub(server->grpc_port());
  v1::TranslateResponse response;
  EXPECT_EQ(Translate(*stub, "hello", &response).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// While it drains, the server itself refuses new calls with UNAVAILABLE (not
// a closed port): health turns NOT_SERVING first, then the batcher refuses
// until the lame-duck half second after the drain is over.
TEST_F(ServerTest, DrainingServerRefusesNewCallsItself) {
  ServerOptions options = Options();
  options.max_batch_delay_ms = 0;
  auto server = TranslationServer::Start(options);
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(server->grpc_port()),
                          grpc::InsecureChannelCredentials());
  auto stub = v1::Translator::NewStub(channel);
  v1::TranslateResponse response;
  ASSERT_TRUE(Translate(*stub, "hello", &response).ok());  // Connected.
  std::thread shutdown([&server] { server->Shutdown(); });
  const auto give_up =
      std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (HealthStatus(channel, std::chrono::seconds(30)) == "SERVING" &&
         std::chrono::steady_clock::now() < give_up) {
    std::this_thread::yield();
  }
  const grpc::Status status = Translate(*stub, "hello", &response);
  shutdown.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(status.error_message().find("shutting down"), std::string::npos)
      << "refused by whom? " << status.error_message();
}
// The real binaries: fanyi-server reports its port, serves fanyi-client and
// exits 0 on SIGTERM.
TEST_F(ServerTest, ServerBinaryServesClientAndExitsCleanlyOnSigterm) {
  int stdout_pipe[2];
  ASSERT_EQ(pipe(stdout_pipe), 0);
  // Everything the child needs is built before fork(): it only execs.
  const std::string server_binary = BinaryPath("fanyi-server");
  const std::string model_flag = "--model_dir=" + *model_dir_;
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(stdout_pipe[1], STDOUT_FILENO);
    close(stdout_pipe[0]);
    close(stdout_pipe[1]);
    execl(server_binary.c_str(), server_binary.c_str(), model_flag.c_str(),
          "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
          "--http_listen=127.0.0.1:0", "--threads=1", "--device=cpu",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(stdout_pipe[1]);
  FILE* server_stdout = fdopen(stdout_pipe[0], "r");
  ASSERT_NE(server_stdout, nullptr);
  char line[1024] = {};
  const bool got_line = fgets(line, sizeof(line), server_stdout) != nullptr;
  std::smatch match;
  const std::string first_line = got_line ? line : "";
  const bool ready = std::regex_search(
      first_line, match, std::regex(R"(listening on 127\.0\.0\.1:(\d+))"));
  std::string port;
  // fanyi-client against this server with `arguments`; its output and
  // errors together.
  auto client_with = [&port](const std::string& arguments) {
    return RunCommand(BinaryPath("fanyi-client") + " --server=127.0.0.1:" +
                      port + " " + arguments + " 2>&1");
  };
  if (ready) {
    port = match[1];
    const CommandResult client = client_with("'I like tea.' hello");
    EXPECT_EQ(client.exit_code, 0) << client.output;
    EXPECT_EQ(std::count(client.output.begin(), client.output.end(), '\n'), 2)
        << client.output;

    // Lines of stdin, a blank one among them: each answered in order, the
    // blank one blank.
    const CommandResult lines = RunCommand(
        "printf 'I like tea.\\n\\nhello\\n' | " + BinaryPath("fanyi-client") +
        " --server=127.0.0.1:" + port + " 2>&1");
    EXPECT_EQ(lines.exit_code, 0) << lines.output;
    const std::size_t first_end = lines.output.find('\n');
    EXPECT_NE(first_end, std::string::npos) << lines.output;
    EXPECT_EQ(lines.output.substr(std::min(first_end, lines.output.size()), 2),
              "\n\n")
        << lines.output;
    EXPECT_EQ(std::count(lines.output.begin(), lines.output.end(), '\n'), 3)
        << lines.output;

    // --po fills in a catalog of more messages than one batch holds.
    std::string catalog =
        "msgid \"\"\nmsgstr \"Content-Type: text/plain; charset=UTF-8\\n\"\n"
        "\nmsgid \"I like tea.\"\nmsgstr \"\"\n";
    for (int k = 1; k < 40; ++k) {
      catalog += "\n#, c-format\nmsgid \"Tom has %d cats and " +
                 std::to_string(k) + " dogs.\"\nmsgstr \"\"\n";
    }
    const std::string po_dir = testing_util::MakeTempDir("client_po");
    std::ofstream(po_dir + "/in.po", std::ios::binary) << catalog;
    const CommandResult filled =
        client_with("--po " + po_dir + "/in.po --out " + po_dir + "/out.po");
    EXPECT_EQ(filled.exit_code, 0) << filled.output;
    std::ifstream out_file(po_dir + "/out.po", std::ios::binary);
    const std::string out((std::istreambuf_iterator<char>(out_file)),
                          std::istreambuf_iterator<char>());
    // No ASSERT here: the server must still be stopped below.
    const GettextCatalog read = ReadPo(out);
    EXPECT_EQ(read.entries.size(), 41u) << out;
    if (read.entries.size() == 41u) {
      const CommandResult tea = client_with("'I like tea.'");
      EXPECT_EQ(read.entries[1].translations[0] + "\n", tea.output);
      for (std::size_t k = 1; k < read.entries.size(); ++k) {
        EXPECT_TRUE(read.entries[k].fuzzy) << k;
        EXPECT_FALSE(read.entries[k].translations[0].empty()) << k;
      }
      EXPECT_NE(read.entries[40].translations[0].find("%d"), std::string::npos);
    }
    EXPECT_EQ(RunCommand("msgfmt --check --use-fuzzy -o /dev/null " + po_dir +
                         "/out.po")
                  .exit_code,
              0);

    const CommandResult bad_client = client_with("''");
    EXPECT_NE(bad_client.exit_code, 0);
    EXPECT_NE(bad_client.output.find("INVALID_ARGUMENT"), std::string::npos)
        << bad_client.output;

    // --health asks the health service, as the images' HEALTHCHECK does.
    const CommandResult health = client_with("--health");
    EXPECT_EQ(health.exit_code, 0) << health.output;
    EXPECT_EQ(health.output, "SERVING\n");
    // And about one model, by its name; a name never served is not found.
    const CommandResult model_health =
        client_with("--health --health_service en-zh");
    EXPECT_EQ(model_health.exit_code, 0) << model_health.output;
    EXPECT_EQ(model_health.output, "SERVING\n");
    const CommandResult unknown_health =
        client_with("--health --health_service fr-en");
    EXPECT_NE(unknown_health.exit_code, 0);
    EXPECT_NE(unknown_health.output.find("NOT_FOUND"), std::string::npos)
        << unknown_health.output;
  }
  kill(pid, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  fclose(server_stdout);
  ASSERT_TRUE(ready) << "fanyi-server did not report its port: " << first_line;
  ASSERT_TRUE(WIFEXITED(status)) << "fanyi-server died abnormally";
  EXPECT_EQ(WEXITSTATUS(status), 0);

  const CommandResult gone = client_with("--health --timeout_ms=2000");
  EXPECT_NE(gone.exit_code, 0);
  EXPECT_NE(gone.output.find("UNAVAILABLE"), std::string::npos) << gone.output;
}

TEST_F(ServerTest, ServerBinaryNamesABadModelDir) {
  const CommandResult result =
      RunCommand(BinaryPath("fanyi-server") +
                 " --model_dir=/nonexistent/fanyi-model --listen=127.0.0.1:0"
                 " --metrics_listen=127.0.0.1:0 2>&1");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.output.find("/nonexistent/fanyi-model"), std::string::npos)
      << result.output;
}

}  // namespace
}  // namespace fanyi
