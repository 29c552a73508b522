// Hostile requests against a real fanyi-server process on 127.0.0.1, over
// LibreTranslate's HTTP API, as any anonymous client could send them:
// documents nested tens of thousands deep (HTML, a .docx's XML), markup that
// makes an HTML parser multiply elements or record errors, JSON nested
// deep in the body or a glossary, a .docx with a huge entry name or a
// namespace URI on millions of elements, subtitles full of unclosed tags,
// integers that would wrap, and one client filling the file store. For
// each: the server answers (a refusal names what is wrong), stays alive,
// answers /health and a plain translation while and after it works, and its
// peak resident memory grows by less than kMaxGrowthKib.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "server/translation_server.h"
#include "tests/controlled_engine.h"
#include "tests/server_process.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"
#include "tests/zip_files.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;
using testing_util::HttpAnswer;
using testing_util::HttpExchange;
using testing_util::Repeat;
using testing_util::ServerProcess;

// What one hostile request may add to the server's peak resident memory:
// the bound every case is held to (the HTML parse alone may take 16 MiB plus
// 48 bytes a byte of a 1 MiB body).
constexpr long kMaxGrowthKib = 256 * 1024;
// How long an answer may take before the test calls the server hung: a
// guard, not a measurement (the times are printed).
constexpr int kAnswerGuardS = 30;

const std::string& TinyModelDir() {
  static const auto* directory = new std::string(testing_util::TrainTinyModel(
      testing_util::MakeTempDir("hostile_requests_model")));
  return *directory;
}

// Field `name` (kB) of /proc/`pid`/status.
long ProcStatusKib(pid_t pid, const std::string& name) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(name + ":", 0) == 0) {
      return std::stol(line.substr(name.size() + 1));
    }
  }
  return -1;
}

// Makes the peak resident size of `pid` its current one again.
void ResetPeak(pid_t pid) {
  std::ofstream("/proc/" + std::to_string(pid) + "/clear_refs") << "5";
}

std::string Post(const std::string& path, const std::string& content_type,
                 const std::string& body) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

std::string JsonTranslate(const std::string& fields) {
  return Post("/translate", "application/json",
              "{\"source\":\"en\",\"target\":\"zh\"," + fields + "}");
}

// A .txt, .html, .srt or .docx upload to /translate_file.
std::string FileUpload(const std::string& filename, const std::string& content,
                       const std::string& api_key = "") {
  const std::string boundary = "fanyi-hostile-boundary";
  std::string body;
  auto field = [&](const std::string& name, const std::string& value) {
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" +
            name + "\"\r\n\r\n" + value + "\r\n";
  };
  field("source", "en");
  field("target", "zh");
  if (!api_key.empty()) field("api_key", api_key);
  body += "--" + boundary +
          "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" +
          filename + "\"\r\nContent-Type: application/octet-stream\r\n\r\n" +
          content + "\r\n--" + boundary + "--\r\n";
  return Post("/translate_file", "multipart/form-data; boundary=" + boundary,
              body);
}

// A .docx whose word/document.xml is `document`.
std::string Docx(const std::string& document) {
  return testing_util::ZipOf(
      {{"[Content_Types].xml",
        "<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats."
        "org/package/2006/content-types\"/>"},
       {"word/document.xml", document}});
}

const std::string kWordMain =
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

// A document.xml with `body` inside w:body.
std::string WordDocument(const std::string& body,
                         const std::string& namespaces = "") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document xmlns:w=\"" +
         kWordMain + "\"" + namespaces + "><w:body>" + body +
         "</w:body></w:document>";
}

class HostileRequestsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_ = new ServerProcess(
        {"--model_dir=" + TinyModelDir(), "--beam_size=1", "--http_threads=2"});
    // Warm: the first translation loads what later ones reuse.
    ExpectServing();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static HttpAnswer Send(const std::string& request) {
    return HttpExchange(server_->http_port(), request, kAnswerGuardS);
  }

  // The server is alive, says it is healthy and translates.
  static void ExpectServing() {
    ASSERT_EQ(waitpid(server_->pid(), nullptr, WNOHANG), 0)
        << "fanyi-server has exited";
    const HttpAnswer health = Send(
        "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(health.status, 200) << health.body;
    const HttpAnswer plain = Send(JsonTranslate("\"q\":\"I like tea.\""));
    EXPECT_EQ(plain.status, 200) << plain.body;
    EXPECT_NE(plain.body.find("translatedText"), std::string::npos);
  }

  // Sends `request` (named `name`) while another client asks for /health
  // and a plain translation over and over; expects its answer to have
  // `status` and, unless empty, `message_part` in its body. The server must
  // answer the other client every time, stay alive and keep its peak
  // resident growth within kMaxGrowthKib.
  static HttpAnswer Attack(const std::string& name, const std::string& request,
                           std::vector<int> statuses,
                           const std::string& message_part = "") {
    const pid_t pid = server_->pid();
    ResetPeak(pid);
    const long resident_before = ProcStatusKib(pid, "VmRSS");
    const auto start = std::chrono::steady_clock::now();
    std::future<HttpAnswer> hostile =
        std::async(std::launch::async, [&request] { return Send(request); });
    int honest = 0;
    double slowest_honest_s = 0;
    while (hostile.wait_for(std::chrono::seconds(0)) !=
               std::future_status::ready ||
           honest == 0) {
      const auto asked = std::chrono::steady_clock::now();
      const HttpAnswer health = Send(
          "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
          "close\r\n\r\n");
      EXPECT_EQ(health.status, 200) << name << ": /health while attacked";
      const HttpAnswer plain = Send(JsonTranslate("\"q\":\"Good night.\""));
      EXPECT_EQ(plain.status, 200) << name << ": " << plain.body;
      slowest_honest_s = std::max(slowest_honest_s,
                                  std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - asked)
                                      .count());
      ++honest;
    }
    const HttpAnswer answer = hostile.get();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    const long growth = ProcStatusKib(pid, "VmHWM") - resident_before;
    std::cout << name << ": " << answer.status << " in " << seconds
              << " s, peak resident +" << growth / 1024 << " MiB, " << honest
              << " honest exchanges (slowest " << slowest_honest_s
              << " s): " << answer.body.substr(0, 200) << std::endl;
    EXPECT_NE(std::find(statuses.begin(), statuses.end(), answer.status),
              statuses.end())
        << name << ": " << answer.status << " " << answer.body.substr(0, 500);
    if (!message_part.empty()) {
      EXPECT_NE(answer.body.find(message_part), std::string::npos)
          << name << ": " << answer.body.substr(0, 500);
    }
    EXPECT_LT(growth, kMaxGrowthKib) << name;
    ExpectServing();
    return answer;
  }

  static ServerProcess* server_;
};

ServerProcess* HostileRequestsTest::server_ = nullptr;

// HTML nested 100,000 deep, on each path that reads HTML (Gumbo's parse of
// it is quadratic: refused before); markup that makes Gumbo record errors
// with the open elements (30 KB once took 1 GB) or reopen formatting
// elements in every block (200 in each of 20,000: 4 million elements).
TEST_F(HostileRequestsTest, HtmlIsParsedWithinItsDepthAndMemoryBounds) {
  const std::string deep = Repeat("<div>", 100000) + "deep words";
  Attack("html 100000 deep",
         JsonTranslate("\"format\":\"html\",\"q\":\"" + deep + "\""), {400},
         "HTML nests elements");
  Attack("html 100000 deep, source auto",
         Post("/translate", "application/json",
              "{\"source\":\"auto\",\"target\":\"zh\",\"format\":\"html\","
              "\"q\":\"" +
                  deep + "\"}"),
         {400}, "HTML nests elements");
  Attack("html file 100000 deep", FileUpload("deep.html", deep), {400},
         "HTML nests elements");
  // Within the limit: translated.
  Attack("html 200 deep",
         JsonTranslate("\"format\":\"html\",\"q\":\"" + Repeat("<div>", 200) +
                       "I like tea.\""),
         {200});
  for (const std::string& unclosed :
       {std::string("<a"), std::string("<b><i>"), std::string("<table><td>"),
        std::string("<a href=x>"), std::string("</p><select>")}) {
    Attack("html 600 KB of " + unclosed,
           JsonTranslate("\"format\":\"html\",\"q\":\"" +
                         Repeat(unclosed, (600 << 10) / unclosed.size()) +
                         " words\""),
           {200, 400});
  }
  Attack("html 600 KB of <h1><li> (nesting the pass before the parse misses)",
         JsonTranslate("\"format\":\"html\",\"q\":\"" +
                       Repeat("<h1><li>", (600 << 10) / 8) + "\""),
         {400}, "HTML");
  std::string attributes = "<p";
  for (int i = 0; i < 40000; ++i) attributes += " a" + std::to_string(i);
  Attack(
      "html tag of 40000 attributes",
      JsonTranslate("\"format\":\"html\",\"q\":\"" + attributes + ">words\""),
      {400}, "HTML: a tag has more than 512 attributes");
  // Just under that limit, tag after tag: Gumbo's cost per tag is bounded.
  std::string crowded = "<p";
  for (int i = 0; i < 500; ++i) crowded += " a" + std::to_string(i);
  crowded += ">x</p>";
  Attack("html 600 KB of tags of 500 attributes",
         JsonTranslate("\"format\":\"html\",\"q\":\"" +
                       Repeat(crowded, (600 << 10) / crowded.size()) + "\""),
         {200, 400});
  std::string reopened = "<p>";
  for (int i = 0; i < 200; ++i) {
    reopened += "<b class=c" + std::to_string(i) + ">";
  }
  reopened += "</p>" + Repeat("<p>x</p>", 20000);
  Attack("html formatting reopened in 20000 blocks",
         JsonTranslate("\"format\":\"html\",\"q\":\"" + reopened + "\""), {400},
         "HTML: parsing it");  // Its memory bound (or CPU, if slow).
}

// JSON nested 100,000 deep in q, in the glossary, and in a form's glossary
// string: refused before any parser, copy or dump recurses.
TEST_F(HostileRequestsTest, DeepJsonIsRefusedBeforeItIsWalked) {
  const std::string deep_array = Repeat("[", 100000) + Repeat("]", 100000);
  Attack("json q 100000 deep", JsonTranslate("\"q\":" + deep_array), {400},
         "nests arrays and objects more than 8 deep");
  std::string deep_object;
  for (int i = 0; i < 100000; ++i) deep_object += "{\"a\":";
  deep_object += "\"b\"" + Repeat("}", 100000);
  Attack("json glossary 100000 deep",
         JsonTranslate("\"q\":\"I like tea.\",\"glossary\":" + deep_object),
         {400}, "nests");
  Attack("form glossary string 100000 deep",
         Post("/translate", "application/x-www-form-urlencoded",
              "q=tea&source=en&target=zh&glossary=" +
                  Repeat("%7B%22a%22%3A", 50000)),
         {400}, "glossary nests");
  // The API's own shape passes, and brackets in strings are text.
  Attack("json q array and glossary",
         JsonTranslate("\"q\":[\"I like tea.\",\"Good [[[[[[[[[[ \\\" "
                       "{{{{{{{{{{ night.\"],\"glossary\":{}"),
         {200});
}

// A .docx nested 100,000 deep; one with an entry name of 65,000
// characters (once matched with std::regex, which recursed per character);
// one whose empty elements each sit in a 60 KB namespace URI (once copied
// into every node); one of 4 million empty elements.
TEST_F(HostileRequestsTest, DocxIsReadWithinItsBounds) {
  Attack(
      "docx 100000 deep",
      FileUpload("deep.docx", Docx(WordDocument(Repeat("<w:tbl>", 100000) +
                                                Repeat("</w:tbl>", 100000)))),
      {400}, "XML nests elements more than 256 deep");
  const std::string paragraph = "<w:p><w:r><w:t>I like tea.</w:t></w:r></w:p>";
  Attack("docx entry name of 65000 characters",
         FileUpload("long.docx",
                    testing_util::ZipOf(
                        {{"word/document.xml", WordDocument(paragraph)},
                         {"word/" + std::string(65000, 'a') + ".xml", "x"}})),
         {200});
  Attack("docx elements in a 60 KB namespace",
         FileUpload("uri.docx",
                    Docx(WordDocument(Repeat("<x:e/>", 100000),
                                      " xmlns:x=\"http://" +
                                          std::string(60000, 'n') + "\""))),
         {400}, "XML element name of 60009 bytes");
  Attack("docx of 4 million elements",
         FileUpload("wide.docx", Docx(WordDocument(Repeat("<w:e/>", 4000000)))),
         {400}, "elements and stretches of text");
}

// Subtitles of 100 KB of '<a' on one cue line: the tag scan is linear.
TEST_F(HostileRequestsTest, SubtitlesFullOfUnclosedTagsAnswerAtOnce) {
  Attack("srt 100 KB of <a",
         FileUpload("tags.srt", "1\n00:00:01,000 --> 00:00:02,000\n" +
                                    Repeat("<a", 50000) + " tea\n"),
         {200, 400});
  Attack("srt 100 KB of {\\",
         FileUpload("braces.srt", "1\n00:00:01,000 --> 00:00:02,000\n" +
                                      Repeat("{\\", 50000) + " tea\n"),
         {200, 400});
}

// Integers that would wrap into range are refused, naming the range.
TEST_F(HostileRequestsTest, IntegerFieldsDoNotWrap) {
  Attack("alternatives 2^32 + 2",
         JsonTranslate("\"q\":\"I like tea.\",\"alternatives\":4294967298"),
         {400}, "alternatives must be from 0 to 1000");
  Attack("beam_size 2^64 as digits",
         JsonTranslate("\"q\":\"I like tea.\",\"beam_size\":"
                       "\"18446744073709551616\""),
         {400}, "beam_size must be from 0 to 1000");
  Attack("beam_size -1",
         JsonTranslate("\"q\":\"I like tea.\",\"beam_size\":-1"), {400},
         "beam_size must be from 0 to 1000");
}

// A true/false field takes true or false (or "true", "false", "1", "0"
// from a form), nothing else.
TEST_F(HostileRequestsTest, BooleanFieldsTakeTrueOrFalse) {
  Attack("translate_template_tokens \"maybe\"",
         JsonTranslate("\"q\":\"Delete %s?\","
                       "\"translate_template_tokens\":\"maybe\""),
         {400}, "translate_template_tokens must be true or false");
  Attack("translate_template_tokens 2",
         JsonTranslate("\"q\":\"Delete %s?\",\"translate_template_tokens\":2"),
         {400}, "translate_template_tokens must be true or false");
  Attack("translate_template_tokens true",
         JsonTranslate("\"q\":\"Delete %s?\","
                       "\"translate_template_tokens\":true"),
         {200});
}

// One client (an API key) fills its share of the file store and is told to
// slow down; another client's file is still taken.
TEST(HostileFileStoreTest, OneClientCannotFillTheFileStore) {
  const std::string keys =
      testing_util::MakeTempDir("hostile_file_store") + "/keys.txt";
  std::ofstream(keys) << "greedy\nhonest\n";
  ServerProcess server({"--model_dir=" + TinyModelDir(), "--beam_size=1",
                        "--api_keys_file=" + keys,
                        "--http_file_store_client_bytes=200"});
  auto upload = [&](const std::string& key) {
    return HttpExchange(server.http_port(),
                        FileUpload("tea.txt", "I like tea.", key),
                        kAnswerGuardS);
  };
  int stored = 0;
  HttpAnswer answer;
  for (int i = 0; i < 100; ++i) {
    answer = upload("greedy");
    if (answer.status != 200) break;
    ++stored;
  }
  EXPECT_EQ(answer.status, 429) << answer.body;
  EXPECT_NE(answer.body.find("a client's share"), std::string::npos)
      << answer.body;
  EXPECT_GT(stored, 0);
  const HttpAnswer other = upload("honest");
  EXPECT_EQ(other.status, 200) << other.body;
  EXPECT_NE(other.body.find("translatedFileUrl"), std::string::npos);
}

// A client that sends a request and hangs up holds no place: its queued
// sentences leave the queue for the next client's, and none of them is
// decoded. (Once, five such clients filled the queue and honest ones got
// 429 until their abandoned sentences had all decoded.)
TEST(HttpHangUpTest, AClientThatHangsUpLeavesTheQueue) {
  testing_util::EngineControl control;
  control.GateNewEngines(true);
  ServerOptions options;
  options.model_dir = TinyModelDir();
  options.listen = "127.0.0.1:0";
  options.metrics_listen = "127.0.0.1:0";
  options.http_listen = "127.0.0.1:0";
  options.max_queue = 8;
  options.max_request_sentences = 8;
  options.max_batch_size = 1;  // One sentence decodes; the rest wait.
  options.beam_size = 1;
  options.max_beam_size = 1;
  options.threads = 1;
  options.device = "cpu";
  // The test counts what decoding is given: no second decodings of the
  // tiny model's loops.
  options.output_guard = false;
  options.engine_factory = [&control](const Translator& translator) {
    return control.NewEngine(translator);
  };
  const std::unique_ptr<TranslationServer> server =
      TranslationServer::Start(options);
  const int metrics_port = server->metrics_port();
  const std::string depth = "fanyi_queue_depth{model=\"en-zh\"}";
  const std::string eight_texts =
      "\"q\":[\"I like tea.\",\"Good night.\",\"Where is the station?\","
      "\"Thank you very much.\",\"It is raining today.\",\"I am tired.\","
      "\"Tom is my friend.\",\"The cat is asleep.\"]";
  control.SetGateOpen(false);

  // The first client's first sentence decodes, held; seven wait.
  const int first = testing_util::ConnectToLocalPort(server->http_port());
  const std::string request = JsonTranslate(eight_texts);
  ASSERT_EQ(send(first, request.data(), request.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size()));
  ASSERT_TRUE(control.WaitForHeldSteps(1));
  EXPECT_EQ(testing_util::MetricValue(
                testing_util::WaitForMetric(metrics_port, depth, 7,
                                            std::chrono::seconds(60)),
                depth),
            7);
  const HttpAnswer refused =
      HttpExchange(server->http_port(), request, kAnswerGuardS);
  EXPECT_EQ(refused.status, 429) << refused.body;

  // It hangs up: the next client's eight sentences take the queue.
  close(first);
  testing_util::WaitForMetric(metrics_port, "fanyi_http_hang_ups_total", 1,
                              std::chrono::seconds(60));
  std::future<HttpAnswer> second = std::async(std::launch::async, [&] {
    return HttpExchange(server->http_port(), request, kAnswerGuardS);
  });
  EXPECT_EQ(testing_util::MetricValue(
                testing_util::WaitForMetric(metrics_port, depth, 8,
                                            std::chrono::seconds(60)),
                depth),
            8);
  control.SetGateOpen(true);
  const HttpAnswer answer = second.get();
  EXPECT_EQ(answer.status, 200) << answer.body;
  // The first client's held sentence and the second client's eight were
  // all that decoding was given.
  std::size_t added = 0;
  for (const auto& sources : control.AddedByEngine()) added += sources.size();
  EXPECT_EQ(added, 1u + 8u);
}

}  // namespace
}  // namespace fanyi
