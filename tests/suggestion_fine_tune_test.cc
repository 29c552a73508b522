// Users' corrections feed back, end to end with the real programs: a
// fanyi-server serving a repository takes a suggestion on POST /suggest,
// fanyi-train fine-tunes the served version on its --suggestions, the new
// version is dropped into the repository, and the server then serves the
// suggested translation.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/text/parallel_corpus.h"
#include "common/text/script_converter.h"
#include "tests/server_process.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;
using testing_util::BinaryPath;
using testing_util::HttpAnswer;
using testing_util::HttpExchange;
using testing_util::RunCommand;

// POSTs `body` as JSON to `path` on the HTTP API at `port`.
HttpAnswer PostJson(int port, const std::string& path,
                    const nlohmann::json& body) {
  const std::string text = body.dump();
  return HttpExchange(port, "POST " + path +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Content-Type: application/json\r\n"
                                "Content-Length: " +
                                std::to_string(text.size()) +
                                "\r\nConnection: close\r\n\r\n" + text);
}

std::string TranslateOverHttp(int port, const std::string& text) {
  const HttpAnswer answer = PostJson(
      port, "/translate", {{"q", text}, {"source", "en"}, {"target", "zh"}});
  EXPECT_EQ(answer.status, 200) << answer.body;
  return nlohmann::json::parse(answer.body).value("translatedText", "");
}

TEST(SuggestionFineTuneTest, ASuggestionFineTunesAModelThatServesIt) {
  const std::string dir = testing_util::MakeTempDir("suggestion_fine_tune");
  const std::string pairs_path = testing_util::WriteTinyPairs(dir, 30);
  ParallelTsvReader pairs_reader(pairs_path);
  ParallelCorpus pairs;
  pairs_reader.Read(30, &pairs);
  ASSERT_GE(pairs.pairs.size(), 2u);
  const std::string repository = dir + "/repository";
  testing_util::AddModelVersion(repository, "en-zh", 1,
                                testing_util::TrainTinyModel(dir, 30));
  const std::string database = dir + "/suggestions.db";
  testing_util::ServerProcess server({"--model_repository=" + repository,
                                      "--repository_poll_ms=50",
                                      "--suggestions_db=" + database});

  // A correction the served model does not give: another pair's target, in
  // the Simplified characters the model is trained to write.
  const std::string text = pairs.pairs[0].source;
  const std::string suggestion = ScriptConverter(ChineseScript::kSimplified)
                                     .Convert(pairs.pairs[1].target);
  ASSERT_NE(TranslateOverHttp(server.http_port(), text), suggestion);
  const HttpAnswer settings =
      HttpExchange(server.http_port(),
                   "GET /frontend/settings HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Connection: close\r\n\r\n");
  EXPECT_EQ(nlohmann::json::parse(settings.body).value("suggestions", false),
            true);
  HttpAnswer answer = PostJson(
      server.http_port(), "/suggest",
      {{"q", text}, {"s", suggestion}, {"source", "en"}, {"target", "zh"}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(nlohmann::json::parse(answer.body),
            nlohmann::json({{"success", true}}));
  // A suggestion missing its s, for a pair not served, blank, not a string
  // or not UTF-8 is refused, naming what is wrong.
  answer = PostJson(server.http_port(), "/suggest",
                    {{"q", text}, {"source", "en"}, {"target", "zh"}});
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(nlohmann::json::parse(answer.body).value("error", ""),
            "Invalid request: missing s parameter");
  answer =
      PostJson(server.http_port(), "/suggest",
               {{"q", text}, {"s", "x"}, {"source", "fr"}, {"target", "zh"}});
  EXPECT_EQ(answer.status, 400) << answer.body;
  answer =
      PostJson(server.http_port(), "/suggest",
               {{"q", " \n"}, {"s", "x"}, {"source", "en"}, {"target", "zh"}});
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(nlohmann::json::parse(answer.body).value("error", ""),
            "Invalid request: q is blank");
  answer = PostJson(
      server.http_port(), "/suggest",
      {{"q", {"a", "b"}}, {"s", "x"}, {"source", "en"}, {"target", "zh"}});
  EXPECT_EQ(answer.status, 400) << answer.body;
  const std::string form = "q=Hi&s=%FF%FE&source=en&target=zh";
  answer = HttpExchange(server.http_port(),
                        "POST /suggest HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        "Content-Type: application/x-www-form-urlencoded\r\n"
                        "Content-Length: " +
                            std::to_string(form.size()) +
                            "\r\nConnection: close\r\n\r\n" + form);
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(nlohmann::json::parse(answer.body)
                .value("error", "")
                .rfind("Invalid request: s is not UTF-8", 0),
            0u)
      << answer.body;

  // Fine-tuned from the served version on the same pairs and the
  // suggestion, read ten times an epoch.
  const std::string run = dir + "/fine_tuned";
  const testing_util::CommandResult trained = RunCommand(
      BinaryPath("fanyi-train") + " --init_from=" + repository +
      "/en-zh/1 --train=" + pairs_path + " --dev=" + pairs_path +
      " --suggestions=" + database + " --suggestion_repeats=10 --out=" + run +
      " --ranks=1 --threads=1 --device=cpu --dropout=0 --label_smoothing=0"
      " --epochs=60 --validate_every=60 --batch_tokens=128 --warmup=50"
      " --vocab_min_count=1 --average_last=0 --length_penalties= 2>&1");
  ASSERT_EQ(trained.exit_code, 0) << trained.output;
  testing_util::AddModelVersion(repository, "en-zh", 2, run + "/best");

  // The repository is polled: version 2 serves once a gRPC answer says so.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(120);
  v1::TranslateResponse response;
  while (std::chrono::steady_clock::now() < deadline) {
    ASSERT_TRUE(
        testing_util::TranslateAt(server.address(), text, &response).ok());
    if (response.model().version() == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(response.model().version(), 2);
  EXPECT_EQ(response.translation().text(), suggestion);
  EXPECT_EQ(TranslateOverHttp(server.http_port(), text), suggestion);
}

}  // namespace
}  // namespace fanyi
