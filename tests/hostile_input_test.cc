// Hostile input and hostile connections against a real TranslationServer on
// 127.0.0.1 serving the tiny trained model: oversized messages, random
// bytes, odd Unicode, and raw TCP connections that never finish a request.
// After each, the server must still translate and report SERVING.

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/health_check.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::ConnectToLocalPort;
using testing_util::HttpGet;
using testing_util::StatusCodeName;

constexpr int kMaxMessageBytes = 2 << 20;
constexpr int kMaxInputChars = 4096;
constexpr int kMaxRequestSentences = 64;

// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF). Written here independently of
// common/text/utf8.h, whose verdicts it checks.
bool IsValidUtf8(const std::string& text) {
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    int length = 0;
    unsigned char low = 0x80, high = 0xBF;  // Range of the second byte.
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;   // Overlong.
      if (lead == 0xED) high = 0x9F;  // Surrogates.
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;   // Overlong.
      if (lead == 0xF4) high = 0x8F;  // Above U+10FFFF.
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (int k = 1; k < length; ++k) {
      const unsigned char byte = static_cast<unsigned char>(text[i + k]);
      const unsigned char min = k == 1 ? low : 0x80;
      const unsigned char max = k == 1 ? high : 0xBF;
      if (byte < min || byte > max) return false;
    }
    i += length;
  }
  return true;
}

class HostileInputTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ == nullptr) {
      model_dir_ = new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("hostile_input_test_model")));
    }
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.max_input_chars = kMaxInputChars;
    options.max_request_sentences = kMaxRequestSentences;
    options.max_message_bytes = kMaxMessageBytes;
    options.threads = 1;
    options.device = "cpu";
    server_ = TranslationServer::Start(options).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }

  static std::shared_ptr<grpc::Channel> NewChannel() {
    grpc::ChannelArguments arguments;
    // Lets the client send more than the server accepts, so the server's
    // limit is what is tested.
    arguments.SetMaxSendMessageSize(-1);
    return grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(server_->grpc_port()),
        grpc::InsecureChannelCredentials(), arguments);
  }

  static grpc::Status Translate(v1::Translator::Stub& stub,
                                const std::string& text,
                                v1::TranslateResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(60));
    v1::TranslateRequest request;
    request.set_text(text);
    return stub.Translate(&context, request, response);
  }

  // The server still translates and its health service says SERVING.
  static void ExpectHealthy() {
    auto channel = NewChannel();
    auto stub = v1::Translator::NewStub(channel);
    v1::TranslateResponse response;
    const grpc::Status status = Translate(*stub, "I like tea.", &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_FALSE(response.translation().text().empty());
    EXPECT_EQ(HealthStatus(channel, std::chrono::seconds(30)), "SERVING");
  }

  static std::string* model_dir_;
  static TranslationServer* server_;
};

std::string* HostileInputTest::model_dir_ = nullptr;
TranslationServer* HostileInputTest::server_ = nullptr;

TEST_F(HostileInputTest, OddTextsGetAClearStatusAndTheServerStaysHealthy) {
  struct Case {
    std::string name;
    std::string text;
    // The one answer expected; a non-OK one must come with a message
    // containing `message_part`.
    grpc::StatusCode code;
    std::string message_part;
  };
  using grpc::StatusCode;
  constexpr StatusCode ok = StatusCode::OK;
  constexpr StatusCode invalid = StatusCode::INVALID_ARGUMENT;
  // Texts with a word in them translate (unknown words become <unk>, control
  // and format characters are dropped or kept by the tokenizer); texts with
  // none, invalid UTF-8 and texts over the model's length are refused.
  const std::vector<Case> cases = {
      {"NUL inside", std::string("hello\0world", 11), ok, ""},
      {"only NULs", std::string(16, '\0'), invalid, "no tokens"},
      {"right-to-left marks", "\u200Fhello \u202Eworld\u202C \u200F", ok, ""},
      {"Hebrew and Arabic",
       "\u05E9\u05DC\u05D5\u05DD "
       "\u0645\u0631\u062D\u0628\u0627",
       ok, ""},
      {"emoji", "I like tea \U0001F375 \U0001F600!", ok, ""},
      {"emoji ZWJ family", "\U0001F468\u200D\U0001F469\u200D\U0001F467", ok,
       ""},
      {"byte order mark", "\uFEFFhello", ok, ""},
      {"only whitespace", " \t\u3000\u00A0 ", invalid, "no tokens"},
      {"combining marks", "e\u0301\u0301\u0301\u0301\u0301", ok, ""},
      {"control characters", "\x01\x02\x1B[31mred\x7F", ok, ""},
      {"overlong slash", "\xC0\xAF", invalid, "UTF-8"},
      {"surrogate", "\xED\xA0\x80", invalid, "UTF-8"},
      {"above U+10FFFF", "\xF4\x90\x80\x80", invalid, "UTF-8"},
      {"truncated sequence", "tea \xE4\xB8", invalid, "UTF-8"},
      // Over the character limit: refused before anything reads the text.
      {"1 MB of 'a'", std::string(1 << 20, 'a'), invalid, "characters"},
      {"1 MB of U+4E2D",
       [] {
         std::string text;
         while (text.size() < (1u << 20)) text += "\u4E2D";
         return text;
       }(),
       invalid, "characters"},
      {"4097 characters of U+00E9",
       [] {
         std::string text;
         for (int i = 0; i <= kMaxInputChars; ++i) text += "\u00E9";
         return text;
       }(),
       invalid, "characters"},
      // Within it: one long word is one (unknown) token; a run-on sentence
      // is translated in clauses; a text with no letters comes back as
      // written.
      {"4000 'a'", std::string(4000, 'a'), ok, ""},
      {"400 'a '",
       [] {
         std::string text;
         while (text.size() < 400) text += "a ";
         return text;
       }(),
       ok, ""},
      {"4000 '!'", std::string(4000, '!'), ok, ""},
      // More sentences than a request may hold are refused.
      {"1000 'Go! '", testing_util::Repeat("Go! ", 1000), invalid, "sentences"},
      {"over max_message_bytes", std::string(kMaxMessageBytes + 1024, 'a'),
       StatusCode::RESOURCE_EXHAUSTED, ""},
  };
  auto channel = NewChannel();
  auto stub = v1::Translator::NewStub(channel);
  for (const Case& test_case : cases) {
    v1::TranslateResponse response;
    const grpc::Status status = Translate(*stub, test_case.text, &response);
    std::cout << test_case.name << ": " << StatusCodeName(status.error_code())
              << " " << status.error_message() << std::endl;
    EXPECT_EQ(status.error_code(), test_case.code)
        << test_case.name << ": " << StatusCodeName(status.error_code()) << ": "
        << status.error_message();
    if (status.ok()) {
      EXPECT_FALSE(response.translation().text().empty()) << test_case.name;
    } else {
      EXPECT_FALSE(status.error_message().empty()) << test_case.name;
      EXPECT_NE(status.error_message().find(test_case.message_part),
                std::string::npos)
          << test_case.name << ": " << status.error_message();
    }
  }
  ExpectHealthy();
}

TEST_F(HostileInputTest, TenThousandRandomByteStrings) {
  constexpr int kRequests = 10000;
  constexpr int kThreads = 8;
  std::mutex mutex;
  std::map<std::string, int> counts;  // Guarded by mutex: by status code.
  std::vector<std::string> failures;  // Guarded by mutex.
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&, t] {
      std::mt19937 random(1000 + t);
      std::uniform_int_distribution<int> length(1, 64), byte(0, 255);
      auto stub = v1::Translator::NewStub(NewChannel());
      for (int i = t; i < kRequests; i += kThreads) {
        std::string text(length(random), '\0');
        for (char& c : text) c = static_cast<char>(byte(random));
        v1::TranslateResponse response;
        const grpc::Status status = Translate(*stub, text, &response);
        const bool valid = IsValidUtf8(text);
        std::string problem;
        if (!valid &&
            (status.error_code() != grpc::StatusCode::INVALID_ARGUMENT ||
             status.error_message().find("UTF-8") == std::string::npos)) {
          problem = "invalid UTF-8 not rejected as such";
        } else if (valid && !status.ok() &&
                   (status.error_code() != grpc::StatusCode::INVALID_ARGUMENT ||
                    status.error_message().empty())) {
          problem = "valid UTF-8 failed without a clear reason";
        }
        std::lock_guard<std::mutex> lock(mutex);
        ++counts[StatusCodeName(status.error_code()) +
                 (valid ? " (valid UTF-8)" : " (invalid UTF-8)")];
        if (!problem.empty() && failures.size() < 10) {
          failures.push_back(problem + ": " +
                             StatusCodeName(status.error_code()) + ": " +
                             status.error_message());
        }
      }
    });
  }
  for (std::thread& sender : senders) sender.join();
  int total = 0;
  for (const auto& [code, count] : counts) {
    std::cout << code << ": " << count << std::endl;
    total += count;
  }
  EXPECT_EQ(total, kRequests);
  EXPECT_TRUE(failures.empty()) << failures.front();
  ExpectHealthy();
}

// Raw TCP connections that connect and then never send, or send a request
// one byte at a time, to both ports; while they hang, translations and
// scrapes must still succeed, and the hanging connections must still be
// open (so the success was not bought by dropping them on a timeout).
TEST_F(HostileInputTest, IdleAndSlowConnectionsDoNotBlockOthers) {
  constexpr int kIdlePerPort = 4;
  std::vector<int> hanging;
  for (int i = 0; i < kIdlePerPort; ++i) {
    hanging.push_back(ConnectToLocalPort(server_->grpc_port()));
    hanging.push_back(ConnectToLocalPort(server_->metrics_port()));
  }
  // Slow senders: an HTTP/2 client preface to the gRPC port and an HTTP
  // request to /metrics, one byte every 50 ms, never finished.
  const std::string preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  const std::string http_request =
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow";
  std::atomic<bool> stop{false};
  std::vector<std::thread> slow_senders;
  std::vector<int> slow_fds = {ConnectToLocalPort(server_->grpc_port()),
                               ConnectToLocalPort(server_->metrics_port())};
  const std::vector<std::string> slow_payloads = {
      preface.substr(0, preface.size() - 1), http_request};
  for (size_t s = 0; s < slow_fds.size(); ++s) {
    slow_senders.emplace_back([&, s] {
      const std::string& payload = slow_payloads[s];
      for (size_t i = 0; i < payload.size() && !stop; ++i) {
        send(slow_fds[s], &payload[i], 1, MSG_NOSIGNAL);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      // Then stay silent, the connection open, until the test ends.
    });
  }

  auto stub = v1::Translator::NewStub(NewChannel());
  for (int i = 0; i < 20; ++i) {
    v1::TranslateResponse response;
    const grpc::Status status = Translate(*stub, "I like tea.", &response);
    ASSERT_TRUE(status.ok()) << i << ": " << status.error_message();
  }
  for (int i = 0; i < 3; ++i) {
    std::string metrics;
    ASSERT_NO_THROW(metrics = HttpGet(server_->metrics_port(), "/metrics"))
        << "scrape " << i;
    EXPECT_NE(metrics.find("fanyi_requests_total"), std::string::npos);
  }
  ExpectHealthy();

  // Every hanging connection is still open: a peek finds no end of stream.
  hanging.insert(hanging.end(), slow_fds.begin(), slow_fds.end());
  for (size_t i = 0; i < hanging.size(); ++i) {
    char byte;
    const ssize_t peeked = recv(hanging[i], &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    EXPECT_NE(peeked, 0) << "connection " << i << " was closed by the server";
  }
  stop = true;
  for (std::thread& sender : slow_senders) sender.join();
  for (int fd : hanging) close(fd);
}

}  // namespace
}  // namespace fanyi
