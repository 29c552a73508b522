// LibreTranslate's HTTP API on a real server (127.0.0.1, a really trained
// tiny model), spoken to over plain sockets: every way of sending the
// fields, the answers checked against the same server's gRPC answers, the
// errors with their status codes and messages, the limits under abuse, and
// the metrics.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/formats/gettext_catalog.h"
#include "common/formats/po_reader.h"
#include "common/formats/xml_tree.h"
#include "common/formats/zip_package.h"
#include "common/text/script_converter.h"
#include "server/http/libretranslate_api.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"
#include "tests/zip_files.h"

namespace fanyi {
namespace {

using testing_util::HttpAnswer;
using testing_util::HttpExchange;

class HttpApiTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ == nullptr) {
      model_dir_ = new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("http_api_test_model")));
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
    options.http_listen = "127.0.0.1:0";
    options.http_request_timeout_ms = 1000;
    options.http_max_body_bytes = 64 << 10;
    options.max_batch_texts = 8;
    options.threads = 1;
    options.device = "cpu";
    return options;
  }

  // A request to the suite's server: `method` `target` with `body` of
  // `content_type` (no Content-Type header when empty).
  static HttpAnswer Call(const std::string& method, const std::string& target,
                         const std::string& body = "",
                         const std::string& content_type = "", int port = 0) {
    std::string request = method + " " + target +
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          "Connection: close\r\n";
    if (!content_type.empty()) {
      request += "Content-Type: " + content_type + "\r\n";
    }
    if (!body.empty() || method == "POST") {
      request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    }
    return HttpExchange(port != 0 ? port : server_->http_port(),
                        request + "\r\n" + body);
  }

  static HttpAnswer PostJson(const nlohmann::json& body, int port = 0) {
    return Call("POST", "/translate", body.dump(), "application/json", port);
  }

  // What the same server's gRPC Translate answers for `text`.
  static v1::Translation GrpcAnswer(
      const std::string& text, v1::Script script = v1::SCRIPT_UNSPECIFIED) {
    auto stub = v1::Translator::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                            grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    v1::TranslateRequest request;
    request.set_text(text);
    request.set_script(script);
    v1::TranslateResponse response;
    const grpc::Status status = stub->Translate(&context, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response.translation();
  }

  // The text of GrpcAnswer.
  static std::string GrpcTranslation(
      const std::string& text, v1::Script script = v1::SCRIPT_UNSPECIFIED) {
    return GrpcAnswer(text, script).text();
  }

  // A multipart/form-data body of `fields` (name, value) and, when
  // `filename` is set, a file field "file" with `file_content`.
  static std::string Multipart(
      const std::vector<std::pair<std::string, std::string>>& fields,
      const std::string& filename = "", const std::string& file_content = "") {
    std::string body;
    for (const auto& [name, value] : fields) {
      body += "--" + kBoundary + "\r\nContent-Disposition: form-data; name=\"" +
              name + "\"\r\n\r\n" + value + "\r\n";
    }
    if (!filename.empty()) {
      body += "--" + kBoundary +
              "\r\nContent-Disposition: form-data; name=\"file\"; "
              "filename=\"" +
              filename +
              "\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
              file_content + "\r\n";
    }
    return body + "--" + kBoundary + "--\r\n";
  }
  static inline const std::string kBoundary = "fanyi-test-boundary";

  // POST /translate_file of `filename` from English to `target`; on
  // success, the downloaded file.
  static HttpAnswer TranslateFile(const std::string& filename,
                                  const std::string& content,
                                  const std::string& target = "zh",
                                  const std::string& source = "en") {
    const HttpAnswer answer = Call(
        "POST", "/translate_file",
        Multipart({{"source", source}, {"target", target}}, filename, content),
        "multipart/form-data; boundary=" + kBoundary);
    if (answer.status != 200) return answer;
    const std::string url = Body(answer).at("translatedFileUrl");
    const std::string root = "http://127.0.0.1";
    EXPECT_EQ(url.substr(0, root.size()), root);
    return Call("GET", url.substr(root.size()));
  }

  static nlohmann::json Body(const HttpAnswer& answer) {
    return nlohmann::json::parse(answer.body);
  }

  static std::string* model_dir_;
  static TranslationServer* server_;
};

std::string* HttpApiTest::model_dir_ = nullptr;
TranslationServer* HttpApiTest::server_ = nullptr;

TEST_F(HttpApiTest, TranslatesAsGrpcDoes) {
  const std::string text = "I love you. Where is the station?";
  const HttpAnswer answer =
      PostJson({{"q", text}, {"source", "en"}, {"target", "zh"}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"), "application/json");
  EXPECT_EQ(answer.headers.at("access-control-allow-origin"), "*");
  const nlohmann::json body = Body(answer);
  const v1::Translation grpc = GrpcAnswer(text);
  EXPECT_EQ(body.size(), 2u) << answer.body;
  EXPECT_EQ(body["translatedText"], grpc.text());
  // The same decoding's confidence (its last digits may differ with the
  // batch it shared).
  ASSERT_TRUE(body["confidence"].is_number()) << answer.body;
  EXPECT_NEAR(body["confidence"].get<double>(), grpc.confidence(), 1e-4);
  EXPECT_TRUE(grpc.has_confidence());
  EXPECT_GT(grpc.confidence(), 0);
  EXPECT_LT(grpc.confidence(), 1);
  // UTF-8 as it is: no \u escapes.
  EXPECT_EQ(answer.body.find("\\u"), std::string::npos) << answer.body;
}

TEST_F(HttpApiTest, AnArrayOfTextsGetsAnArrayInOrderWithBlanksKept) {
  const std::vector<std::string> texts = {"Good morning.", "  ", "Thank you."};
  const HttpAnswer answer =
      PostJson({{"q", texts}, {"source", "en"}, {"target", "zh"}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(Body(answer)["translatedText"],
            nlohmann::json(
                {GrpcTranslation(texts[0]), "  ", GrpcTranslation(texts[2])}));
  // One confidence per text; a blank one, not translated, has 1.
  const nlohmann::json confidence = Body(answer)["confidence"];
  ASSERT_EQ(confidence.size(), 3u) << answer.body;
  EXPECT_NEAR(confidence[0].get<double>(), GrpcAnswer(texts[0]).confidence(),
              1e-4);
  EXPECT_EQ(confidence[1], 1.0);
  EXPECT_NEAR(confidence[2].get<double>(), GrpcAnswer(texts[2]).confidence(),
              1e-4);
}

TEST_F(HttpApiTest, EveryWayOfSendingTheFieldsGetsTheSameAnswer) {
  const std::string expected = GrpcTranslation("Good night.");
  const std::string form = "q=Good+night.&source=en&target=zh";
  const std::string multipart =
      Multipart({{"q", "Good night."}, {"source", "en"}, {"target", "zh"}});
  const std::vector<HttpAnswer> answers = {
      // libretranslatepy: an url-encoded form.
      Call("POST", "/translate", form, "application/x-www-form-urlencoded"),
      // A browser's FormData.
      Call("POST", "/translate", multipart,
           "multipart/form-data; boundary=" + kBoundary),
      // deep-translator: the query string, an empty body, no Content-Type.
      Call("POST", "/translate?q=Good%20night.&source=en&target=zh"),
      // JSON without a Content-Type.
      Call("POST", "/translate",
           R"({"q": "Good night.", "source": "en", "target": "zh"})"),
  };
  for (std::size_t i = 0; i < answers.size(); ++i) {
    SCOPED_TRACE("style " + std::to_string(i));
    ASSERT_EQ(answers[i].status, 200) << answers[i].body;
    EXPECT_EQ(Body(answers[i])["translatedText"], expected);
  }
  // libretranslatepy sends /languages as a GET with a form body.
  const HttpAnswer languages = Call(
      "GET", "/languages", "api_key=", "application/x-www-form-urlencoded");
  EXPECT_EQ(languages.status, 200) << languages.body;
}

// The Python clients people use, unchanged, through the python3 on PATH
// (scripts/test.sh installs them there).
TEST_F(HttpApiTest, RealLibreTranslateClientsTranslate) {
  const std::string url =
      "http://127.0.0.1:" + std::to_string(server_->http_port()) + "/";
  const testing_util::CommandResult result = testing_util::RunCommand(
      "python3 - <<'EOF' 2>&1\n"
      "from libretranslatepy import LibreTranslateAPI\n"
      "from deep_translator import LibreTranslator\n"
      "url = '" +
      url +
      "'\n"
      "api = LibreTranslateAPI(url)\n"
      "print(api.translate('Good night.', 'en', 'zh'))\n"
      "print(' '.join(language['code'] for language in api.languages()))\n"
      "print(LibreTranslator(source='en', target='zh', api_key='any',\n"
      "                      custom_url=url).translate('Good night.'))\n"
      "EOF\n");
  ASSERT_EQ(result.exit_code, 0)
      << result.output
      << "\n(scripts/test.sh installs libretranslatepy and deep-translator "
         "for the python3 on PATH)";
  const std::string expected = GrpcTranslation("Good night.");
  EXPECT_EQ(result.output,
            expected + "\nen zh zh-Hans zh-Hant zt\n" + expected + "\n");
}

TEST_F(HttpApiTest, AutoDetectsEachTextOfABatchOnItsOwn) {
  // A text already in the target language comes back as it is.
  const std::vector<std::string> texts = {"Good morning, how are you today?",
                                          "今天天气很好，我们去公园散步吧。"};
  const HttpAnswer answer =
      PostJson({{"q", texts}, {"source", "auto"}, {"target", "zh"}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const nlohmann::json body = Body(answer);
  EXPECT_EQ(body["translatedText"],
            nlohmann::json({GrpcTranslation(texts[0]), texts[1]}));
  ASSERT_EQ(body["detectedLanguage"].size(), 2u) << answer.body;
  EXPECT_EQ(body["detectedLanguage"][0]["language"], "en");
  EXPECT_EQ(body["detectedLanguage"][1]["language"], "zh");
  for (const nlohmann::json& detected : body["detectedLanguage"]) {
    EXPECT_GT(detected["confidence"].get<int>(), 50) << answer.body;
    EXPECT_LE(detected["confidence"].get<int>(), 100);
  }
  // One text: one detection, not a list.
  const HttpAnswer one =
      PostJson({{"q", texts[0]}, {"source", "auto"}, {"target", "zh"}});
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(Body(one)["detectedLanguage"]["language"], "en");
  EXPECT_EQ(Body(one)["translatedText"], GrpcTranslation(texts[0]));
}

TEST_F(HttpApiTest, MastodonsBatchOfHtmlPostsKeepsMentionsLinksAndHashtags) {
  // As Mastodon sends posts: an array of HTML, format html, source auto.
  const std::string mention =
      "<span class=\"h-card\" translate=\"no\"><a "
      "href=\"https://social.example/@alice\" class=\"u-url mention\">"
      "@<span>alice</span></a></span>";
  const std::string link =
      "<a href=\"https://example.org/news/1\" target=\"_blank\" "
      "rel=\"nofollow noopener noreferrer\"><span class=\"invisible\">"
      "https://</span><span class=\"ellipsis\">example.org/news/1</span>"
      "<span class=\"invisible\"></span></a>";
  const std::string hashtag =
      "<a href=\"https://social.example/tags/tea\" class=\"mention "
      "hashtag\" rel=\"tag\">#<span>tea</span></a>";
  const std::vector<std::string> posts = {
      "<p>" + mention + " I love you.</p><p>Where is the station?<br>" + link +
          "</p>",
      "<p>Good morning. " + hashtag + "</p>",
      "<p>今天天气很好，我们去公园散步吧。</p>"};
  const HttpAnswer answer = PostJson({{"q", posts},
                                      {"source", "auto"},
                                      {"target", "zh-Hans"},
                                      {"format", "html"}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  const nlohmann::json body = Body(answer);
  ASSERT_EQ(body["translatedText"].size(), 3u) << answer.body;
  const std::vector<std::string> out = body["translatedText"];
  for (std::size_t i = 0; i < posts.size(); ++i) {
    EXPECT_EQ(testing_util::HtmlStructure(out[i]),
              testing_util::HtmlStructure(posts[i]))
        << out[i];
  }
  EXPECT_NE(out[0].find(mention), std::string::npos) << out[0];
  EXPECT_NE(out[0].find("<br>" + link + "</p>"), std::string::npos) << out[0];
  EXPECT_NE(out[1].find(hashtag), std::string::npos) << out[1];
  EXPECT_EQ(out[0].find("I love you"), std::string::npos) << out[0];
  EXPECT_NE(
      out[0].find("<p>" + GrpcTranslation("Where is the station?") + "<br>"),
      std::string::npos)
      << out[0];
  // The Chinese post is detected as such and kept byte for byte.
  EXPECT_EQ(out[2], posts[2]);
  EXPECT_EQ(body["detectedLanguage"][0]["language"], "en");
  EXPECT_EQ(body["detectedLanguage"][1]["language"], "en");
  EXPECT_EQ(body["detectedLanguage"][2]["language"], "zh");
}

TEST_F(HttpApiTest, AlternativesAreOtherDistinctTranslations) {
  const std::string text = "My mother hates writing letters.";
  const HttpAnswer one = PostJson(
      {{"q", text}, {"source", "en"}, {"target", "zh"}, {"alternatives", 3}});
  ASSERT_EQ(one.status, 200) << one.body;
  const nlohmann::json body = Body(one);
  ASSERT_TRUE(body["alternatives"].is_array()) << one.body;
  const std::vector<std::string> others = body["alternatives"];
  EXPECT_GE(others.size(), 1u) << one.body;
  EXPECT_LE(others.size(), 3u);
  std::set<std::string> distinct(others.begin(), others.end());
  distinct.insert(body["translatedText"].get<std::string>());
  EXPECT_EQ(distinct.size(), others.size() + 1) << one.body;

  // An array gets one list per text; a blank text has none.
  const HttpAnswer batch = PostJson({{"q", {text, " "}},
                                     {"source", "en"},
                                     {"target", "zh"},
                                     {"alternatives", 2}});
  ASSERT_EQ(batch.status, 200) << batch.body;
  ASSERT_EQ(Body(batch)["alternatives"].size(), 2u) << batch.body;
  EXPECT_EQ(Body(batch)["alternatives"][1], nlohmann::json::array());
  // Without asking, no field.
  EXPECT_FALSE(Body(PostJson({{"q", text}, {"source", "en"}, {"target", "zh"}}))
                   .contains("alternatives"));
  EXPECT_EQ(PostJson({{"q", text},
                      {"source", "en"},
                      {"target", "zh"},
                      {"alternatives", -1}})
                .status,
            400);
}

TEST_F(HttpApiTest, DetectNamesTheLanguageWhateverTheModelsServe) {
  const auto detect = [](const std::string& text) {
    const HttpAnswer answer =
        Call("POST", "/detect", nlohmann::json({{"q", text}}).dump(),
             "application/json");
    EXPECT_EQ(answer.status, 200) << answer.body;
    return Body(answer);
  };
  const nlohmann::json english =
      detect("The weather is lovely today, so we are going for a walk.");
  EXPECT_EQ(english[0]["language"], "en");
  EXPECT_GT(english[0]["confidence"].get<int>(), 50);
  // Only English to Chinese is served; these are named all the same.
  EXPECT_EQ(detect("今天天气很好，我们去公园散步吧。")[0]["language"], "zh");
  EXPECT_EQ(detect("Il fait très beau aujourd'hui, nous allons nous "
                   "promener dans le parc.")[0]["language"],
            "fr");
  EXPECT_EQ(detect("Heute ist das Wetter sehr schön, also gehen wir im Park "
                   "spazieren.")[0]["language"],
            "de");

  // gRPC's Detect: a ranking per text, as HTTP's per_text.
  auto stub = v1::Translator::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                          grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::DetectRequest request;
  request.add_texts("今天天气很好，我们去公园散步吧。");
  request.add_texts(
      "<p>Il fait très beau aujourd'hui, nous allons nous "
      "promener dans le parc.</p>");
  request.set_format(v1::FORMAT_HTML);
  v1::DetectResponse response;
  ASSERT_TRUE(stub->Detect(&context, request, &response).ok());
  ASSERT_EQ(response.rankings_size(), 2);
  EXPECT_EQ(response.rankings(0).languages(0).language(), "zh");
  EXPECT_EQ(response.rankings(1).languages(0).language(), "fr");
  EXPECT_GT(response.rankings(1).languages(0).confidence(), 50);
  grpc::ClientContext bad_context;
  v1::DetectRequest bad;  // More texts than the server's batch limit (8).
  for (int i = 0; i < 9; ++i) bad.add_texts("Hello.");
  const grpc::Status refused = stub->Detect(&bad_context, bad, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("the limit is 8"), std::string::npos)
      << refused.error_message();
}

// A list q gets one ranking, as LibreTranslate gives it: each language's
// confidence averaged over the texts it was found in.
TEST_F(HttpApiTest, DetectRanksAListOfTextsTogether) {
  const std::vector<std::string> texts = {
      "The weather is lovely today, so we are going for a walk.",
      "Good morning, Tom."};
  double sum = 0;
  for (const std::string& text : texts) {
    const HttpAnswer one =
        Call("POST", "/detect", nlohmann::json({{"q", text}}).dump(),
             "application/json");
    ASSERT_EQ(one.status, 200) << one.body;
    ASSERT_EQ(Body(one).size(), 1u) << one.body;  // Only English is served.
    sum += Body(one)[0]["confidence"].get<double>();
  }
  const HttpAnswer answer =
      Call("POST", "/detect", nlohmann::json({{"q", texts}}).dump(),
           "application/json");
  ASSERT_EQ(answer.status, 200) << answer.body;
  const nlohmann::json body = Body(answer);
  ASSERT_EQ(body.size(), 1u) << answer.body;
  ASSERT_TRUE(body[0].is_object()) << answer.body;  // Not a list per text.
  EXPECT_EQ(body[0]["language"], "en");
  EXPECT_DOUBLE_EQ(body[0]["confidence"].get<double>(), sum / texts.size());
  // fanyi's per_text: a ranking per text, each as the text alone gets.
  const HttpAnswer each =
      Call("POST", "/detect",
           nlohmann::json({{"q", texts}, {"per_text", true}}).dump(),
           "application/json");
  ASSERT_EQ(each.status, 200) << each.body;
  ASSERT_EQ(Body(each).size(), texts.size()) << each.body;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(Body(each)[i], Body(Call("POST", "/detect",
                                       nlohmann::json({{"q", texts[i]}}).dump(),
                                       "application/json")));
  }
}

TEST_F(HttpApiTest, TheTargetCodePicksTheScript) {
  const std::string text = "My mother hates writing letters.";
  const struct {
    const char* code;
    v1::Script script;
  } cases[] = {{"zh-Hans", v1::SCRIPT_SIMPLIFIED},
               {"ZH-CN", v1::SCRIPT_SIMPLIFIED},
               {"zt", v1::SCRIPT_TRADITIONAL_TAIWAN},
               {"zh-Hant", v1::SCRIPT_TRADITIONAL_TAIWAN},
               {"zh-tw", v1::SCRIPT_TRADITIONAL_TAIWAN},
               {"zh-HK", v1::SCRIPT_TRADITIONAL_HONG_KONG}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.code);
    const HttpAnswer answer =
        PostJson({{"q", text}, {"source", "en"}, {"target", c.code}});
    ASSERT_EQ(answer.status, 200) << answer.body;
    EXPECT_EQ(Body(answer)["translatedText"], GrpcTranslation(text, c.script));
  }
}

TEST_F(HttpApiTest, ChineseIntoAnotherScriptIsConvertedWithoutAModel) {
  const std::string simplified = "这个软件支持简体和繁体中文。";
  const std::string taiwan =
      ScriptConverter(ChineseScript::kTraditionalTaiwan).Convert(simplified);
  ASSERT_NE(taiwan, simplified);
  const auto translate = [](const nlohmann::json& request) {
    const HttpAnswer answer = PostJson(request);
    EXPECT_EQ(answer.status, 200) << answer.body;
    return Body(answer)["translatedText"];
  };
  EXPECT_EQ(
      translate({{"q", simplified}, {"source", "zh"}, {"target", "zh-Hant"}}),
      taiwan);
  // Back (OpenCC keeps Taiwan's vocabulary: characters only).
  EXPECT_EQ(translate({{"q", taiwan}, {"source", "zt"}, {"target", "zh"}}),
            ScriptConverter(ChineseScript::kSimplified).Convert(taiwan));
  EXPECT_EQ(
      translate({{"q", simplified}, {"source", "zh"}, {"target", "zh-HK"}}),
      ScriptConverter(ChineseScript::kTraditionalHongKong).Convert(simplified));
  // Detected as Chinese; in an array, beside a text the model translates.
  const nlohmann::json both = translate({{"q", {simplified, "Hello."}},
                                         {"source", "auto"},
                                         {"target", "zh-Hant"}});
  EXPECT_EQ(both[0], taiwan);
  EXPECT_EQ(both[1], GrpcTranslation("Hello.", v1::SCRIPT_TRADITIONAL_TAIWAN));
  // Checked as any text is before OpenCC reads it.
  const HttpAnswer broken =
      Call("POST", "/translate", "q=%E4%B8&source=zh&target=zh-Hant",
           "application/x-www-form-urlencoded");
  EXPECT_EQ(broken.status, 400) << broken.body;
  EXPECT_NE(broken.body.find("UTF-8"), std::string::npos) << broken.body;
  // gRPC alike: Chinese into Chinese, in the script asked for.
  auto stub = v1::Translator::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                          grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  v1::TranslateBatchRequest batch;
  batch.add_texts(simplified);
  batch.add_texts(taiwan);
  batch.mutable_model()->set_source_language("zh");
  batch.mutable_model()->set_target_language("zh");
  batch.set_script(v1::SCRIPT_TRADITIONAL_TAIWAN);
  v1::TranslateBatchResponse converted;
  ASSERT_TRUE(stub->TranslateBatch(&context, batch, &converted).ok());
  ASSERT_EQ(converted.translations_size(), 2);
  EXPECT_EQ(converted.translations(0).text(), taiwan);
  EXPECT_EQ(converted.translations(1).text(), taiwan);
  EXPECT_EQ(converted.script(), v1::SCRIPT_TRADITIONAL_TAIWAN);
  // HTML keeps its markup, and its code and what it marks not to translate
  // as written, as a translation would; gRPC alike.
  const std::string keep =
      " <code>软件</code> <span translate=\"no\">简体</span>";
  EXPECT_EQ(translate({{"q", "<p>" + simplified + keep + "</p>"},
                       {"source", "zh"},
                       {"target", "zh-Hant"},
                       {"format", "html"}}),
            "<p>" + taiwan + keep + "</p>");
  grpc::ClientContext html_context;
  v1::TranslateRequest html;
  html.set_text("<p>" + simplified + keep + "</p>");
  html.set_format(v1::FORMAT_HTML);
  *html.mutable_model() = batch.model();
  html.set_script(v1::SCRIPT_TRADITIONAL_TAIWAN);
  v1::TranslateResponse html_converted;
  ASSERT_TRUE(stub->Translate(&html_context, html, &html_converted).ok());
  EXPECT_EQ(html_converted.translation().text(),
            "<p>" + taiwan + keep + "</p>");
}

TEST_F(HttpApiTest, ErrorsAnswerWithLibreTranslatesStatusesAndMessages) {
  const struct {
    nlohmann::json body;
    int status;
    std::string error;
  } cases[] = {
      {{{"source", "en"}, {"target", "zh"}},
       400,
       "Invalid request: missing q parameter"},
      {{{"q", "Hi."}, {"target", "zh"}},
       400,
       "Invalid request: missing source parameter"},
      {{{"q", "Hi."}, {"source", "fr"}, {"target", "zh"}},
       400,
       "fr is not supported"},
      {{{"q", "Hi."}, {"source", "en"}, {"target", "de"}},
       400,
       "de is not supported"},
      {{{"q", {"Hi.", 3}}, {"source", "en"}, {"target", "zh"}},
       400,
       "Invalid request: q must be a string or an array of strings"},
      {{{"q", std::vector<std::string>(9, "Hi.")},
        {"source", "en"},
        {"target", "zh"}},
       400,
       "q has 9 entries; the limit is 8"},
      {{{"q", "Hi."}, {"source", "en"}, {"target", "zh"}, {"format", "pdf"}},
       400,
       "Invalid request: format must be text or html"},
      {{{"q", std::vector<std::string>{}}, {"source", "en"}, {"target", "zh"}},
       400,
       "q is empty; send at least one text"},
      {{{"q", {"Hi.", "", std::string(Options().max_input_chars + 1, 'a')}},
        {"source", "en"},
        {"target", "zh"}},
       400,
       "q[2] has " + std::to_string(Options().max_input_chars + 1) +
           " characters; the limit is " +
           std::to_string(Options().max_input_chars)},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.body.dump());
    const HttpAnswer answer = PostJson(c.body);
    EXPECT_EQ(answer.status, c.status);
    EXPECT_EQ(Body(answer), nlohmann::json({{"error", c.error}}));
  }
  // Suggestions are LibreTranslate's to store; fanyi has none.
  const HttpAnswer suggest =
      Call("POST", "/suggest", "q=Hi.&s=x&source=en&target=zh",
           "application/x-www-form-urlencoded");
  EXPECT_EQ(suggest.status, 403);
  EXPECT_EQ(Body(suggest), nlohmann::json({{"error",
                                            "Suggestions are disabled on this "
                                            "server."}}));
  // Invalid UTF-8 cannot be JSON; a form carries it.
  const HttpAnswer not_utf8 =
      Call("POST", "/translate",
           "q=%3Cp%3EHi%20%FF%3C/p%3E&source=en&target=zh&format=html",
           "application/x-www-form-urlencoded");
  EXPECT_EQ(not_utf8.status, 400);
  EXPECT_EQ(Body(not_utf8),
            nlohmann::json({{"error", "q: invalid UTF-8 at byte 6"}}));
  const HttpAnswer not_json =
      Call("POST", "/translate", "{not json", "application/json");
  EXPECT_EQ(not_json.status, 400);
  EXPECT_EQ(Body(not_json)["error"],
            "Invalid request: the body is not valid JSON");
  const HttpAnswer missing = Call("GET", "/no/such/route");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Body(missing)["error"], "Not Found: /no/such/route");
  const HttpAnswer wrong_method = Call("GET", "/translate");
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(Body(wrong_method)["error"], "Method Not Allowed");
  EXPECT_EQ(wrong_method.headers.at("allow"), "POST");
}

TEST_F(HttpApiTest, LanguagesHealthAndSettingsDescribeTheServedModel) {
  // As LibreTranslate: POST /languages is 405, naming GET.
  const HttpAnswer posted = Call("POST", "/languages");
  EXPECT_EQ(posted.status, 405);
  EXPECT_EQ(posted.headers.at("allow"), "GET");
  const HttpAnswer languages = Call("GET", "/languages");
  ASSERT_EQ(languages.status, 200);
  const nlohmann::json listed = Body(languages);
  ASSERT_TRUE(listed.is_array());
  nlohmann::json english;
  for (const nlohmann::json& language : listed) {
    if (language["code"] == "en") english = language;
  }
  ASSERT_FALSE(english.is_null()) << listed.dump();
  EXPECT_EQ(english["name"], "English");
  EXPECT_EQ(english["targets"],
            nlohmann::json({"zh", "zh-Hans", "zh-Hant", "zt"}));

  const HttpAnswer health = Call("GET", "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(Body(health), nlohmann::json({{"status", "ok"}}));

  const HttpAnswer settings = Call("GET", "/frontend/settings");
  ASSERT_EQ(settings.status, 200);
  EXPECT_EQ(Body(settings)["charLimit"], Options().max_input_chars);
  EXPECT_EQ(Body(settings)["keyRequired"], false);
}

TEST_F(HttpApiTest, BatchLimitAndFrontendTimeoutAreSettable) {
  ServerOptions options = Options();
  options.max_batch_texts = 2;
  options.http_frontend_timeout_ms = 900;
  std::unique_ptr<TranslationServer> limited =
      TranslationServer::Start(options);
  const nlohmann::json settings =
      Body(Call("GET", "/frontend/settings", "", "", limited->http_port()));
  EXPECT_EQ(settings["batchLimit"], 2);
  EXPECT_EQ(settings["frontendTimeout"], 900);
  EXPECT_EQ(
      PostJson({{"q", {"One.", "Two."}}, {"source", "en"}, {"target", "zh"}},
               limited->http_port())
          .status,
      200);
  const HttpAnswer refused = PostJson(
      {{"q", {"One.", "Two.", "Three."}}, {"source", "en"}, {"target", "zh"}},
      limited->http_port());
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(Body(refused)["error"], "q has 3 entries; the limit is 2");
}

TEST_F(HttpApiTest, ServedUnderAPathPrefix) {
  ServerOptions options = Options();
  options.url_prefix = "/fanyi";
  std::unique_ptr<TranslationServer> prefixed =
      TranslationServer::Start(options);
  const int port = prefixed->http_port();
  const nlohmann::json request = {
      {"q", "Hello."}, {"source", "en"}, {"target", "zh"}};
  // With the prefix (a proxy that passes it on) or without (one that
  // strips it): the same answers.
  const HttpAnswer with =
      testing_util::HttpPostJson(port, "/fanyi/translate", request.dump());
  ASSERT_EQ(with.status, 200) << with.body;
  EXPECT_EQ(Body(with), Body(PostJson(request, port)));
  EXPECT_EQ(Call("GET", "/fanyi/", "", "", port).status, 200);
  const HttpAnswer bare = Call("GET", "/fanyi", "", "", port);
  EXPECT_EQ(bare.status, 301);
  EXPECT_EQ(bare.headers.at("location"), "/fanyi/");
  EXPECT_EQ(Call("GET", "/fanyiX/languages", "", "", port).status, 404);
  // A translated file's address carries the prefix, and answers.
  const HttpAnswer file =
      Call("POST", "/fanyi/translate_file",
           Multipart({{"source", "en"}, {"target", "zh"}}, "a.txt", "Hello.\n"),
           "multipart/form-data; boundary=" + kBoundary, port);
  ASSERT_EQ(file.status, 200) << file.body;
  const std::string url = Body(file).at("translatedFileUrl");
  const std::string root = "http://127.0.0.1";  // The Host Call sends.
  ASSERT_EQ(url.substr(0, root.size() + 21), root + "/fanyi/download_file/");
  EXPECT_EQ(Call("GET", url.substr(root.size()), "", "", port).status, 200);
  options.url_prefix = "fanyi/";
  EXPECT_THROW(TranslationServer::Start(options), std::invalid_argument);
}

TEST_F(HttpApiTest, FilesComeBackInTheirFormatWithTheirStructure) {
  // Each cue, paragraph or item is translated as the same words sent to
  // /translate would be; what is not words comes back byte for byte.
  const std::string first = GrpcTranslation("I love you.");
  const std::string second = GrpcTranslation("Where is the station?");
  const HttpAnswer srt = TranslateFile(
      "talk.srt",
      "1\r\n00:00:01,000 --> 00:00:02,500\r\nI love you.\r\n\r\n"
      "2\r\n00:00:03,000 --> 00:00:04,000\r\n<i>Where is the station?</i>"
      "\r\n");
  ASSERT_EQ(srt.status, 200) << srt.body;
  EXPECT_EQ(srt.body, "1\r\n00:00:01,000 --> 00:00:02,500\r\n" + first +
                          "\r\n\r\n2\r\n00:00:03,000 --> 00:00:04,000\r\n<i>" +
                          second + "</i>\r\n");
  EXPECT_EQ(srt.headers.at("content-disposition"),
            "attachment; filename=\"talk.zh.srt\"; "
            "filename*=UTF-8''talk.zh.srt");

  const HttpAnswer markdown = TranslateFile(
      "notes.md",
      "# I love you.\n\n```\nI love you.\n```\n\n- Where is the station?\n");
  ASSERT_EQ(markdown.status, 200) << markdown.body;
  EXPECT_EQ(markdown.body,
            "# " + first + "\n\n```\nI love you.\n```\n\n- " + second + "\n");

  const HttpAnswer html =
      TranslateFile("page.html", "<p>I love you.</p><pre>I love you.</pre>");
  ASSERT_EQ(html.status, 200) << html.body;
  EXPECT_EQ(html.body, "<p>" + first + "</p><pre>I love you.</pre>");

  const HttpAnswer text =
      TranslateFile("plain.TXT", "I love you.\n\nWhere is the station?\n");
  ASSERT_EQ(text.status, 200) << text.body;
  EXPECT_EQ(text.body,
            GrpcTranslation("I love you.\n\nWhere is the station?\n"));
  EXPECT_NE(text.body.find(first), std::string::npos) << text.body;
}

TEST_F(HttpApiTest, ADocumentsFragmentGetsNoFullStopItLacked) {
  // Plain text gets the sentence's full stop, as the model writes it...
  const std::string sentence = GrpcTranslation("She married him");
  const std::string stop = "\xE3\x80\x82";  // 。
  ASSERT_GE(sentence.size(), stop.size());
  ASSERT_EQ(sentence.substr(sentence.size() - stop.size()), stop)
      << "the tiny model no longer ends this with a full stop: pick another";
  // ...which a table cell or a bold word in a document lacked.
  const HttpAnswer answer =
      PostJson({{"q",
                 "<table><tr><td>She married him</td><td>She married him.</td>"
                 "</tr></table>"},
                {"source", "en"},
                {"target", "zh"},
                {"format", "html"}});
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(Body(answer)["translatedText"],
            "<table><tr><td>" +
                sentence.substr(0, sentence.size() - stop.size()) +
                "</td><td>" + GrpcTranslation("She married him.") +
                "</td></tr></table>");
}

TEST_F(HttpApiTest, ADocxComesBackAsADocxInTheAskedScript) {
  const std::string document =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\""
      "http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
      "<w:body><w:p><w:r><w:t>I love you.</w:t></w:r></w:p></w:body>"
      "</w:document>";
  const std::string styles = "<w:styles/>";
  const std::string docx = testing_util::ZipOf(
      {{"word/document.xml", document}, {"word/styles.xml", styles}});
  const HttpAnswer answer = TranslateFile("letter.docx", docx, "zh-Hant");
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"),
            "application/vnd.openxmlformats-officedocument.wordprocessingml."
            "document");
  const ZipPackage translated(answer.body,
                              ZipKind::kDocx);  // Unzips, or throws.
  ASSERT_EQ(translated.parts().size(), 1u);
  const std::string expected =
      GrpcTranslation("I love you.", v1::SCRIPT_TRADITIONAL_TAIWAN);
  EXPECT_NE(translated.parts()[0].find("<w:t xml:space=\"preserve\">" +
                                       expected + "</w:t>"),
            std::string::npos)
      << translated.parts()[0];
  EXPECT_NO_THROW(XmlTree{translated.parts()[0]});
  EXPECT_EQ(testing_util::ZipEntry(answer.body, "word/styles.xml"), styles);
}

// An .epub made by EbookLib comes back as an .epub EbookLib reads: each
// XHTML document as /translate translates it as HTML, the metadata, spine,
// table of contents and the uncompressed mimetype first, as they were.
TEST_F(HttpApiTest, AnEpubComesBackAsAnEpub) {
  const std::string dir = testing_util::MakeTempDir("http_api_epub");
  const testing_util::CommandResult made = testing_util::RunCommand(
      "python3 " FANYI_SOURCE_DIR "/tests/epub_book.py make " + dir +
      "/book.epub 2>&1");
  ASSERT_EQ(made.exit_code, 0)
      << made.output << "\n(scripts/test.sh installs EbookLib for python3)";
  std::ifstream in(dir + "/book.epub", std::ios::binary);
  const std::string epub((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  const HttpAnswer answer = TranslateFile("book.epub", epub);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"), "application/epub+zip");
  std::ofstream(dir + "/book.zh.epub", std::ios::binary) << answer.body;
  const auto read = [&dir](const std::string& name) {
    const testing_util::CommandResult result = testing_util::RunCommand(
        "python3 " FANYI_SOURCE_DIR "/tests/epub_book.py read " + dir + "/" +
        name + " 2>&1");
    EXPECT_EQ(result.exit_code, 0) << result.output;
    return nlohmann::json::parse(result.output);
  };
  const nlohmann::json original = read("book.epub");
  const nlohmann::json translated = read("book.zh.epub");
  for (const char* kept :
       {"title", "language", "author", "spine", "first_entry"}) {
    EXPECT_EQ(translated[kept], original[kept]) << kept;
  }
  // The table of contents: its entries, in their order, in the target,
  // each as a document's words are (no full stop they lacked).
  ASSERT_EQ(translated["toc"].size(), original["toc"].size());
  for (std::size_t i = 0; i < original["toc"].size(); ++i) {
    EXPECT_EQ(translated["toc"][i],
              Body(PostJson({{"q", original["toc"][i]},
                             {"source", "en"},
                             {"target", "zh"},
                             {"format", "html"}}))["translatedText"]);
  }
  EXPECT_EQ(translated["first_entry_stored"], true);
  ASSERT_EQ(translated["documents"].size(), 4u);  // Three XHTML, the NCX.
  for (const auto& [name, document] : original["documents"].items()) {
    const HttpAnswer html = PostJson({{"q", document},
                                      {"source", "en"},
                                      {"target", "zh"},
                                      {"format", "html"}});
    ASSERT_EQ(html.status, 200) << html.body;
    EXPECT_EQ(translated["documents"][name], Body(html)["translatedText"])
        << name;
    EXPECT_NE(translated["documents"][name], document) << name;
  }
}

// A .docx's template tokens come back once each, a bold one in its run, and
// a paragraph of tokens alone comes back as written.
TEST_F(HttpApiTest, ADocxKeepsItsTemplateTokens) {
  const std::string document =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\""
      "http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
      "<w:body><w:p><w:r><w:t xml:space=\"preserve\">Tom sent %(name)s "
      "</w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>{count}</w:t></w:r>"
      "<w:r><w:t xml:space=\"preserve\"> letters.</w:t></w:r></w:p>"
      "<w:p><w:r><w:t>{0}: %1$s</w:t></w:r></w:p></w:body></w:document>";
  const HttpAnswer answer = TranslateFile(
      "tokens.docx", testing_util::ZipOf({{"word/document.xml", document}}),
      "zh");
  ASSERT_EQ(answer.status, 200) << answer.body;
  const std::string part =
      ZipPackage(answer.body, ZipKind::kDocx).parts().at(0);
  for (const std::string token : {"%(name)s", "{count}"}) {
    EXPECT_EQ(part.find(token), part.rfind(token)) << token << " in " << part;
    EXPECT_NE(part.find(token), std::string::npos) << token << " in " << part;
  }
  EXPECT_NE(part.find("<w:b/></w:rPr><w:t>{count}</w:t>"), std::string::npos)
      << part;
  EXPECT_NE(part.find(">{0}: %1$s</w:t>"), std::string::npos) << part;
}

// A .po file comes back filled in: each untranslated message translated as
// the same text is over gRPC, marked fuzzy, its tokens kept; the rest as it
// was; gettext's msgfmt --check accepts it. A catalog into another
// language is refused.
TEST_F(HttpApiTest, APoFileComesBackFilledInForMsgfmt) {
  const std::string po =
      "msgid \"\"\nmsgstr \"\"\n\"Language: zh_CN\\n\"\n"
      "\"MIME-Version: 1.0\\n\"\n"
      "\"Content-Type: text/plain; charset=UTF-8\\n\"\n"
      "\"Content-Transfer-Encoding: 8bit\\n\"\n"
      "\"Plural-Forms: nplurals=1; plural=0;\\n\"\n\n"
      "msgid \"I love you.\"\nmsgstr \"我爱你。\"\n\n"
      "#, c-format\nmsgid \"Tom is missing %s.\"\nmsgstr \"\"\n\n"
      "#, c-format\nmsgid \"%d cat\"\nmsgid_plural \"%d cats\"\n"
      "msgstr[0] \"\"\n";
  const HttpAnswer answer = TranslateFile("zh_CN.po", po);
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_EQ(answer.headers.at("content-type"),
            "text/x-gettext-translation; charset=utf-8");
  const GettextCatalog catalog = ReadPo(answer.body);
  ASSERT_EQ(catalog.entries.size(), 4u) << answer.body;
  EXPECT_EQ(catalog.entries[1].translations[0], "我爱你。");
  EXPECT_FALSE(catalog.entries[1].fuzzy);
  EXPECT_EQ(catalog.entries[2].translations[0],
            GrpcTranslation("Tom is missing %s."));
  EXPECT_NE(catalog.entries[2].translations[0].find("%s"), std::string::npos);
  EXPECT_TRUE(catalog.entries[2].fuzzy);
  EXPECT_EQ(catalog.entries[3].translations[0], GrpcTranslation("%d cats"));
  EXPECT_TRUE(catalog.entries[3].fuzzy);
  const std::string path = testing_util::MakeTempDir("http_po") + "/zh_CN.po";
  std::ofstream(path, std::ios::binary) << answer.body;
  EXPECT_EQ(
      std::system(("msgfmt --check --use-fuzzy -o /dev/null " + path).c_str()),
      0);

  const HttpAnswer french =
      TranslateFile("fr.po",
                    "msgid \"\"\nmsgstr \"Language: fr\\n\"\n\nmsgid \"a\"\n"
                    "msgstr \"\"\n");
  EXPECT_EQ(french.status, 400);
  EXPECT_NE(french.body.find("\\\"fr\\\""), std::string::npos) << french.body;
  // A Traditional catalog is not filled in Simplified.
  EXPECT_EQ(TranslateFile("zh_TW.po",
                          "msgid \"\"\nmsgstr \"Language: zh_TW\\n\"\n\n"
                          "msgid \"a\"\nmsgstr \"\"\n",
                          "zh")
                .status,
            400);
}

TEST_F(HttpApiTest, AFileIsDownloadedOnce) {
  const HttpAnswer answer = Call(
      "POST", "/translate_file",
      Multipart({{"source", "en"}, {"target", "zh"}}, "a.txt", "Good night."),
      "multipart/form-data; boundary=" + kBoundary);
  ASSERT_EQ(answer.status, 200) << answer.body;
  const std::string url = Body(answer).at("translatedFileUrl");
  const std::string path = url.substr(url.find("/download_file/"));
  EXPECT_EQ(Call("GET", path).status, 200);
  const HttpAnswer again = Call("GET", path);
  EXPECT_EQ(again.status, 404);
  EXPECT_NE(
      Body(again).at("error").get<std::string>().find("downloaded already"),
      std::string::npos);
}

TEST_F(HttpApiTest, BadFilesGet400SayingWhatIsWrong) {
  const std::string form = "multipart/form-data; boundary=" + kBoundary;
  const std::vector<std::pair<HttpAnswer, std::string>> cases = {
      {TranslateFile("scan.xls", "PK"),
       "Invalid request: file: files of type .xls are not supported; send "
       ".txt, .html, .htm, .srt, .md, .markdown, .docx, .pptx, .odt, .odp, "
       ".epub, .pdf, .po"},
      {TranslateFile("scan.pdf", "%PDF-1.4"),
       "Invalid request: file: the file is not a .pdf that can be read"},
      {TranslateFile("slides.odp",
                     testing_util::ZipOf({{"content.xml", "<x/>"},
                                          {"mimetype", "text/plain"}})),
       "mimetype is not application/vnd.oasis.opendocument.presentation, so "
       "it is no .odp"},
      {TranslateFile("slides.pptx", testing_util::ZipOf({{"x.xml", "<x/>"}})),
       "without ppt/presentation.xml, so it is no .pptx"},
      {TranslateFile("letter.docx", "PK not really a zip"),
       "Invalid request: file: the file is not a .docx (zip) package"},
      {TranslateFile("talk.srt", "no timings here\n"),
       "file: no subtitle has a timing line"},
      {TranslateFile("empty.txt", ""),
       "Invalid request: file: empty.txt is "
       "empty"},
      {Call("POST", "/translate_file",
            Multipart({{"source", "en"}, {"target", "zh"}}), form),
       "Invalid request: missing file parameter"},
      {Call("POST", "/translate_file",
            Multipart({{"source", "auto"}, {"target", "fr"}}, "a.txt", "Hi."),
            form),
       "fr is not supported"},
  };
  for (const auto& [answer, message] : cases) {
    EXPECT_EQ(answer.status, 400) << answer.body;
    EXPECT_NE(Body(answer).at("error").get<std::string>().find(message),
              std::string::npos)
        << answer.body;
  }
}

TEST_F(HttpApiTest, AFilesLanguageIsDetectedFromItsWords) {
  const std::string text =
      "The weather is lovely today.\nWe are going for a walk in the park.\n";
  const std::string html =
      "<html><body><p>The weather is lovely today.</p><p>We are going for a "
      "walk in the park.</p></body></html>";
  const std::string docx = testing_util::ZipOf(
      {{"word/document.xml",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\""
        "http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
        "<w:body><w:p><w:r><w:t>The weather is lovely today.</w:t></w:r></w:p>"
        "</w:body></w:document>"}});
  for (const auto& [name, content] :
       {std::pair{"walk.txt", text}, std::pair{"walk.html", html},
        std::pair{"walk.docx", docx}}) {
    const HttpAnswer answer =
        Call("POST", "/translate_file",
             Multipart({{"source", "auto"}, {"target", "zh"}}, name, content),
             "multipart/form-data; boundary=" + kBoundary);
    ASSERT_EQ(answer.status, 200) << answer.body;
    EXPECT_EQ(Body(answer)["detectedLanguage"]["language"], "en") << name;
    const std::string url = Body(answer).at("translatedFileUrl");
    const HttpAnswer detected =
        Call("GET", url.substr(std::string("http://127.0.0.1").size()));
    // The same file as when its language is named.
    EXPECT_EQ(detected.body, TranslateFile(name, content).body) << name;
  }
}

TEST_F(HttpApiTest, TheSpecDescribesExactlyTheServedRoutes) {
  const HttpAnswer spec = Call("GET", "/spec");
  ASSERT_EQ(spec.status, 200);
  const nlohmann::json document = Body(spec);
  std::set<std::pair<std::string, std::string>> described;
  for (const auto& [path, methods] : document.at("paths").items()) {
    for (const auto& [method, operation] : methods.items()) {
      std::string upper = method;
      std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
      described.emplace(path, upper);
    }
  }
  std::set<std::pair<std::string, std::string>> served;
  for (const HttpRoute& route : LibreTranslateApi::Routes()) {
    for (const std::string& method : route.methods) {
      served.emplace(route.path, method);
    }
  }
  EXPECT_EQ(described, served);
  // docs/http-api.md describes each as "`METHOD /path" (a parameter as a
  // name of its own there), so the page cannot fall behind the server.
  std::ifstream page_file(FANYI_SOURCE_DIR "/docs/http-api.md");
  const std::string page((std::istreambuf_iterator<char>(page_file)),
                         std::istreambuf_iterator<char>());
  ASSERT_FALSE(page.empty());
  for (const auto& [path, method] : served) {
    const std::string route =
        "`" + method + " " + path.substr(0, path.find('{'));
    EXPECT_NE(page.find(route), std::string::npos)
        << route << " is not in docs/http-api.md";
  }
  // And each one is really answered (not 404 or 405); a path with a
  // parameter by its own 404, for a name that names nothing.
  for (const auto& [path, method] : described) {
    const std::size_t parameter = path.find('{');
    const HttpAnswer answer = Call(
        method,
        parameter == std::string::npos ? path : path.substr(0, parameter) + "x",
        "{}", "application/json");
    EXPECT_NE(answer.status, 405) << method << " " << path;
    if (parameter == std::string::npos) {
      EXPECT_NE(answer.status, 404) << method << " " << path;
    } else {
      EXPECT_EQ(answer.status, 404) << method << " " << path;
      EXPECT_NE(Body(answer).at("error").get<std::string>().find(
                    "no translated file x"),
                std::string::npos);
    }
  }
}

TEST_F(HttpApiTest, BrowsersGetTheirCorsPreflight) {
  std::string request =
      "OPTIONS /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
      "Origin: https://example.org\r\n"
      "Access-Control-Request-Method: POST\r\n"
      "Access-Control-Request-Headers: content-type\r\n\r\n";
  const HttpAnswer answer = HttpExchange(server_->http_port(), request);
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.headers.at("access-control-allow-origin"), "*");
  EXPECT_EQ(answer.headers.at("access-control-allow-headers"), "content-type");
  EXPECT_NE(answer.headers.at("access-control-allow-methods").find("POST"),
            std::string::npos);
}

TEST_F(HttpApiTest, AnOversizedBodyGets413) {
  const std::string body(Options().http_max_body_bytes + 1, 'a');
  const HttpAnswer answer = Call("POST", "/translate", body, "text/plain");
  EXPECT_EQ(answer.status, 413);
  EXPECT_EQ(Body(answer)["error"],
            "the request body is larger than the limit of 65536 bytes");
}

TEST_F(HttpApiTest, AClientWaitingFor100ContinueGetsIt) {
  const std::string body = R"({"q": "Hello.", "source": "en", "target": "zh"})";
  const int fd = testing_util::ConnectToLocalPort(server_->http_port());
  const std::string head =
      "POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nExpect: 100-continue\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  ASSERT_EQ(send(fd, head.data(), head.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(head.size()));
  timeval timeout{30, 0};  // A guard against hanging, not a measurement.
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  char interim[64] = {};
  const ssize_t received = recv(fd, interim, sizeof(interim) - 1, 0);
  EXPECT_GT(received, 0);
  EXPECT_EQ(std::string(interim).rfind("HTTP/1.1 100 Continue\r\n", 0), 0u)
      << interim;
  ASSERT_EQ(send(fd, body.data(), body.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(body.size()));
  std::string answer;
  char buffer[4096];
  ssize_t more;
  while ((more = recv(fd, buffer, sizeof(buffer), 0)) > 0) {
    answer.append(buffer, static_cast<std::size_t>(more));
  }
  close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 200 OK", 0), 0u) << answer;
  EXPECT_NE(answer.find(GrpcTranslation("Hello.")), std::string::npos)
      << answer;
}

// Sends a request head one byte every 100 ms; true when the server closes
// the connection before the head is complete.
bool SlowClientIsCutOff(int port) {
  const int fd = testing_util::ConnectToLocalPort(port);
  const std::string head =
      "POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " +
      std::string(60, 'a') + "\r\n\r\n";  // 6 s at this pace.
  bool cut_off = false;
  for (char c : head) {
    if (send(fd, &c, 1, MSG_NOSIGNAL) != 1) {
      cut_off = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!cut_off) {
    // The whole head went out: the connection is cut off if reading it
    // finds the end of the stream without an answer.
    char buffer[256];
    timeval timeout{5, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    cut_off = recv(fd, buffer, sizeof(buffer), 0) <= 0;
  }
  close(fd);
  return cut_off;
}

TEST_F(HttpApiTest, AClientSendingOneByteAtATimeIsCutOff) {
  // The request timeout is 1 s; the head takes 6 s to send.
  EXPECT_TRUE(SlowClientIsCutOff(server_->http_port()));
}

TEST_F(HttpApiTest, AThousandIdleConnectionsLeaveGrpcAndHttpAnswering) {
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    idle.push_back(testing_util::ConnectToLocalPort(server_->http_port()));
  }
  const HttpAnswer health = Call("GET", "/health");
  EXPECT_EQ(health.status, 200);
  const HttpAnswer translated =
      PostJson({{"q", "Hello."}, {"source", "en"}, {"target", "zh"}});
  EXPECT_EQ(translated.status, 200) << translated.body;
  v1::TranslateResponse response;
  EXPECT_TRUE(testing_util::TranslateAt(
                  "127.0.0.1:" + std::to_string(server_->grpc_port()), "Hello.",
                  &response)
                  .ok());
  for (int fd : idle) close(fd);
}

TEST_F(HttpApiTest, MetricsCountRequestsByRouteAndCode) {
  const std::string series =
      R"(fanyi_http_requests_total{code="404",route="other"})";
  const double before = testing_util::MetricValue(
      testing_util::HttpGet(server_->metrics_port(), "/metrics"), series);
  Call("GET", "/nowhere");
  Call("GET", "/nowhere/else");
  const std::string metrics =
      testing_util::HttpGet(server_->metrics_port(), "/metrics");
  EXPECT_EQ(testing_util::MetricValue(metrics, series),
            std::max(before, 0.0) + 2);
  EXPECT_GE(testing_util::MetricValue(
                metrics,
                R"(fanyi_http_request_duration_seconds_count{route="other"})"),
            2);
}

TEST_F(HttpApiTest, ClientsOverTheRequestLimitGet429) {
  const std::string keys =
      testing_util::MakeTempDir("http_api_rate_keys") + "/keys";
  std::ofstream(keys) << "key-one\nkey-two\n";
  ServerOptions options = Options();
  options.http_requests_per_minute = 2;
  options.api_keys_file = keys;
  std::unique_ptr<TranslationServer> limited =
      TranslationServer::Start(options);
  const auto translate = [&](const std::string& key) {
    return PostJson(
        {{"q", "Hello."}, {"source", "en"}, {"target", "zh"}, {"api_key", key}},
        limited->http_port());
  };
  EXPECT_EQ(translate("key-one").status, 200);
  EXPECT_EQ(Call("POST", "/detect", R"({"q": "Hello.", "api_key": "key-one"})",
                 "application/json", limited->http_port())
                .status,
            200);
  const HttpAnswer refused = translate("key-one");
  EXPECT_EQ(refused.status, 429);
  EXPECT_EQ(Body(refused),
            nlohmann::json({{"error", "Slowdown: 2 per 1 minute"}}));
  // Each key has its own minute; other routes are not limited.
  EXPECT_EQ(translate("key-two").status, 200);
  EXPECT_EQ(Call("GET", "/languages", "", "", limited->http_port()).status,
            200);
}

TEST_F(HttpApiTest, AKeyIsNeededWhenKeysAreConfigured) {
  const std::string keys = testing_util::MakeTempDir("http_api_keys") + "/keys";
  std::ofstream(keys) << "# keys\nsecret-one\n\n  secret-two  \n";
  ServerOptions options = Options();
  options.api_keys_file = keys;
  std::unique_ptr<TranslationServer> keyed = TranslationServer::Start(options);
  const nlohmann::json request = {
      {"q", "Hello."}, {"source", "en"}, {"target", "zh"}};
  for (const nlohmann::json& key :
       {nlohmann::json(), nlohmann::json("wrong")}) {
    nlohmann::json with_key = request;
    if (!key.is_null()) with_key["api_key"] = key;
    const HttpAnswer refused = PostJson(with_key, keyed->http_port());
    EXPECT_EQ(refused.status, 403);
    EXPECT_EQ(Body(refused), nlohmann::json({{"error", "Invalid API key"}}));
  }
  nlohmann::json with_key = request;
  with_key["api_key"] = "secret-two";
  const HttpAnswer accepted = PostJson(with_key, keyed->http_port());
  EXPECT_EQ(accepted.status, 200) << accepted.body;
  EXPECT_EQ(Body(Call("GET", "/frontend/settings", "", "",
                      keyed->http_port()))["keyRequired"],
            true);
}

}  // namespace
}  // namespace fanyi
