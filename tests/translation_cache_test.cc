// The translation cache: the bounded LRU map on its own, then a real
// server on 127.0.0.1 (a really trained tiny model) answering LibreTranslate's
// /translate and gRPC's Translate and TranslateBatch from it: the same answer,
// alternatives and confidence included, for the same text asked the same way; a
// translation for anything asked otherwise; the metrics counting both. A new
// model version's answers: model_repository_test.
#include "server/translation_cache.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

constexpr std::size_t kOverhead = TranslationCache::kEntryOverhead;

TEST(TranslationCacheTest, KeepsTheMostRecentlyUsedWithinItsBytes) {
  prometheus::Registry registry;
  // Room for three entries of a 1-byte key and a 9-byte value.
  TranslationCache cache(3 * (10 + kOverhead), registry);
  cache.Put("a", "value-aaa");
  cache.Put("b", "value-bbb");
  cache.Put("c", "value-ccc");
  EXPECT_EQ(cache.bytes(), 3 * (10 + kOverhead));
  EXPECT_EQ(cache.Get("a"), "value-aaa");  // Now the most recent.
  cache.Put("d", "value-ddd");             // Evicts b, the least recent.
  EXPECT_FALSE(cache.Get("b"));
  EXPECT_EQ(cache.Get("a"), "value-aaa");
  EXPECT_EQ(cache.Get("c"), "value-ccc");
  EXPECT_EQ(cache.Get("d"), "value-ddd");
  // Replacing counts the new size once.
  cache.Put("c", "v");
  EXPECT_EQ(cache.bytes(), 2 * (10 + kOverhead) + 2 + kOverhead);
  EXPECT_EQ(cache.Get("c"), "v");
  // Larger than the whole bound: not kept, and nothing evicted for it.
  cache.Put("huge", std::string(4 * kOverhead, 'x'));
  EXPECT_FALSE(cache.Get("huge"));
  EXPECT_EQ(cache.Get("a"), "value-aaa");
  // A value that needs two places evicts two.
  cache.Put("e", std::string(10 + kOverhead + 9, 'y'));
  EXPECT_TRUE(cache.Get("e"));
  EXPECT_LE(cache.bytes(), 3 * (10 + kOverhead));
}

TEST(TranslationCacheTest, KeyPartsNeverRunTogether) {
  std::string first, second;
  AppendKeyPart("ab", &first);
  AppendKeyPart("c", &first);
  AppendKeyPart("a", &second);
  AppendKeyPart("bc", &second);
  EXPECT_NE(first, second);
  std::string third;
  AppendKeyPart("1:a", &third);
  std::string fourth;
  AppendKeyPart("1", &fourth);
  AppendKeyPart("a", &fourth);
  EXPECT_NE(third, fourth);
}

class CachedServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ == nullptr) {
      model_dir_ = new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("translation_cache_test_model")));
    }
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.http_listen = "127.0.0.1:0";
    options.threads = 1;
    options.device = "cpu";
    options.cache_bytes = 1 << 20;
    server_ = TranslationServer::Start(options).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static nlohmann::json Translate(nlohmann::json body) {
    body["source"] = "en";
    if (!body.contains("target")) body["target"] = "zh";
    const testing_util::HttpAnswer answer = testing_util::HttpPostJson(
        server_->http_port(), "/translate", body.dump());
    EXPECT_EQ(answer.status, 200) << answer.body;
    return nlohmann::json::parse(answer.body);
  }

  static double Metric(const std::string& name) {
    return std::max(
        0.0,
        testing_util::MetricValue(
            testing_util::HttpGet(server_->metrics_port(), "/metrics"), name));
  }

  static std::string* model_dir_;
  static TranslationServer* server_;
};

std::string* CachedServerTest::model_dir_ = nullptr;
TranslationServer* CachedServerTest::server_ = nullptr;

TEST_F(CachedServerTest, TheSameTextAskedTheSameWayIsAnsweredFromTheCache) {
  const double hits = Metric("fanyi_cache_hits_total");
  const double misses = Metric("fanyi_cache_misses_total");
  const nlohmann::json request = {{"q", "I like tea."}, {"alternatives", 2}};
  const nlohmann::json first = Translate(request);
  EXPECT_EQ(Metric("fanyi_cache_misses_total"), misses + 1);
  const nlohmann::json second = Translate(request);
  EXPECT_EQ(Metric("fanyi_cache_hits_total"), hits + 1);
  EXPECT_EQ(second, first);  // Text, alternatives and confidence.
  EXPECT_GT(Metric("fanyi_cache_bytes"), 0);

  // Asked otherwise, each is translated: another option, format or script.
  for (const nlohmann::json& other :
       {nlohmann::json{{"q", "I like tea."}},
        nlohmann::json{{"q", "I like tea."}, {"alternatives", 1}},
        nlohmann::json{{"q", "I like tea."}, {"format", "html"}},
        nlohmann::json{{"q", "I like tea."}, {"target", "zh-Hant"}},
        nlohmann::json{{"q", "I like tea."}, {"beam_size", 3}}}) {
    const double before = Metric("fanyi_cache_misses_total");
    Translate(other);
    EXPECT_EQ(Metric("fanyi_cache_misses_total"), before + 1) << other;
  }

  // A batch: its cached text from the cache, the others translated, in
  // their places, and kept.
  const std::vector<std::string> texts = {"Good morning.", "I like tea.",
                                          "See you tomorrow."};
  const double batch_hits = Metric("fanyi_cache_hits_total");
  const nlohmann::json batch = Translate({{"q", texts}, {"alternatives", 2}});
  EXPECT_EQ(Metric("fanyi_cache_hits_total"), batch_hits + 1);
  EXPECT_EQ(batch["translatedText"][1], first["translatedText"]);
  EXPECT_EQ(batch["alternatives"][1], first["alternatives"]);
  EXPECT_EQ(batch["confidence"][1], first["confidence"]);
  for (int i : {0, 2}) {
    const nlohmann::json alone =
        Translate({{"q", texts[i]}, {"alternatives", 2}});
    EXPECT_EQ(alone["translatedText"], batch["translatedText"][i]);
  }
  EXPECT_EQ(Metric("fanyi_cache_hits_total"), batch_hits + 3);
}

TEST_F(CachedServerTest, GrpcAnswersFromTheSameCache) {
  auto stub = v1::Translator::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                          grpc::InsecureChannelCredentials()));
  const auto translate = [&](const std::string& text) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    v1::TranslateRequest request;
    request.set_text(text);
    request.set_beam_size(2);
    v1::TranslateResponse response;
    EXPECT_TRUE(stub->Translate(&context, request, &response).ok());
    return response;
  };
  const double hits = Metric("fanyi_cache_hits_total");
  const v1::TranslateResponse first = translate("We are friends.");
  const v1::TranslateResponse second = translate("We are friends.");
  EXPECT_EQ(Metric("fanyi_cache_hits_total"), hits + 1);
  EXPECT_EQ(second.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(second.beam_size(), 2);

  // A batch: the cached text in its place, with the counts it had.
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(60));
  v1::TranslateBatchRequest batch;
  batch.add_texts("It is raining.");
  batch.add_texts("We are friends.");
  batch.set_beam_size(2);
  v1::TranslateBatchResponse answered;
  ASSERT_TRUE(stub->TranslateBatch(&context, batch, &answered).ok());
  ASSERT_EQ(answered.translations_size(), 2);
  EXPECT_EQ(answered.translations(1).SerializeAsString(),
            first.translation().SerializeAsString());
  EXPECT_EQ(answered.translations(0).text(),
            translate("It is raining.").translation().text());
  EXPECT_EQ(Metric("fanyi_cache_hits_total"), hits + 3);
  EXPECT_EQ(answered.beam_size(), 2);

  // The same text asked the same way over gRPC, then HTTP: each surface
  // keeps its answers its own way, and each is answered.
  grpc::ClientContext script_context;
  v1::TranslateRequest simplified;
  simplified.set_text("They are brothers.");
  simplified.set_script(v1::SCRIPT_SIMPLIFIED);
  simplified.set_beam_size(4);
  v1::TranslateResponse grpc_answer;
  ASSERT_TRUE(stub->Translate(&script_context, simplified, &grpc_answer).ok());
  const nlohmann::json http_answer =
      Translate({{"q", "They are brothers."}, {"beam_size", 4}});
  EXPECT_EQ(http_answer["translatedText"], grpc_answer.translation().text());
}

}  // namespace
}  // namespace fanyi
