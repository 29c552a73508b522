// The request limits shared through a real redis-server by two real
// servers on 127.0.0.1 (one really trained tiny model): a key limited to N
// requests a minute gets N in all, not N from each; with Redis gone, each
// server goes on serving at its own limits and says so in its metrics.
// RedisAddress reads what --redis_url takes.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "server/http/api_key_store.h"
#include "server/http/redis_counters.h"
#include "server/translation_server.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

using testing_util::HttpAnswer;

// A redis-server on 127.0.0.1:port(), without persistence, killed by the
// destructor.
class RedisProcess {
 public:
  RedisProcess() : port_(testing_util::FreePort()) {
    int pipe_ends[2];
    if (pipe(pipe_ends) != 0) throw std::runtime_error("pipe failed");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(pipe_ends[1], STDOUT_FILENO);
      close(pipe_ends[0]);
      const std::string port = std::to_string(port_);
      execlp("redis-server", "redis-server", "--port", port.c_str(), "--bind",
             "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize",
             "no", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(pipe_ends[1]);
    output_ = fdopen(pipe_ends[0], "r");
    // Ready once it says so; its log goes to the pipe.
    char line[1024];
    while (std::fgets(line, sizeof line, output_) != nullptr) {
      if (std::string(line).find("Ready to accept connections") !=
          std::string::npos) {
        return;
      }
    }
    throw std::runtime_error("redis-server exited before it was ready");
  }
  ~RedisProcess() { Kill(); }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    if (output_ != nullptr) std::fclose(output_);
    output_ = nullptr;
  }

  int port() const { return port_; }

 private:
  int port_;
  pid_t pid_ = -1;
  FILE* output_ = nullptr;
};

TEST(RedisAddressTest, ReadsRedisUrls) {
  RedisAddress plain = RedisAddress::Parse("redis://cache");
  EXPECT_EQ(plain.host, "cache");
  EXPECT_EQ(plain.port, 6379);
  EXPECT_EQ(plain.database, 0);
  RedisAddress full =
      RedisAddress::Parse("redis://fanyi:s3cr:et@10.0.0.7:6380/2");
  EXPECT_EQ(full.user, "fanyi");
  EXPECT_EQ(full.password, "s3cr:et");
  EXPECT_EQ(full.host, "10.0.0.7");
  EXPECT_EQ(full.port, 6380);
  EXPECT_EQ(full.database, 2);
  RedisAddress v6 = RedisAddress::Parse("redis://:pw@[::1]:7000");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 7000);
  EXPECT_EQ(v6.password, "pw");
  EXPECT_TRUE(v6.user.empty());
  for (const char* bad :
       {"cache:6379", "http://cache", "redis://", "redis://cache:0",
        "redis://cache:70000", "redis://cache:port", "redis://cache/x",
        "redis://[::1", "redis://[::1]x", "redis://:pw@"}) {
    EXPECT_THROW(RedisAddress::Parse(bad), std::invalid_argument) << bad;
  }
}

class RedisLimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ == nullptr) {
      model_dir_ = new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("redis_limits_test_model")));
    }
  }

  static ServerOptions Options(const std::string& redis_url,
                               const std::string& keys_db) {
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.http_listen = "127.0.0.1:0";
    options.threads = 1;
    options.device = "cpu";
    options.api_keys_db = keys_db;
    options.redis_url = redis_url;
    options.http_requests_per_minute = 3;
    return options;
  }

  static int Translate(int port, const std::string& key) {
    nlohmann::json body = {{"q", "Hello."}, {"source", "en"}, {"target", "zh"}};
    if (!key.empty()) body["api_key"] = key;
    return testing_util::HttpPostJson(port, "/translate", body.dump()).status;
  }

  static std::string* model_dir_;
};

std::string* RedisLimitsTest::model_dir_ = nullptr;

TEST_F(RedisLimitsTest, TwoReplicasEnforceOneLimitAndServeWithoutRedis) {
  RedisProcess redis;
  const std::string url = "redis://127.0.0.1:" + std::to_string(redis.port());
  const std::string keys_db =
      testing_util::MakeTempDir("redis_limits_test") + "/keys.db";
  {
    ApiKeyStore keys(keys_db);
    ApiKeyLimits four;
    four.requests_per_minute = 4;
    keys.Put("shared", four);
    ApiKeyLimits two;
    two.requests_per_minute = 2;
    keys.Put("later", two);
    ApiKeyLimits one;
    one.requests_per_minute = 1;
    keys.Put("flushed", one);
  }
  std::unique_ptr<TranslationServer> first =
      TranslationServer::Start(Options(url, keys_db));
  std::unique_ptr<TranslationServer> second =
      TranslationServer::Start(Options(url, keys_db));
  const int ports[] = {first->http_port(), second->http_port()};

  // The key's 4 a minute, taken in turns from both: 4 in all.
  int admitted = 0;
  for (int i = 0; i < 8; ++i) {
    const int status = Translate(ports[i % 2], "shared");
    EXPECT_TRUE(status == 200 || status == 429) << status;
    admitted += status == 200;
  }
  EXPECT_EQ(admitted, 4);
  // Key-less requests from one address: the default 3, in all.
  admitted = 0;
  for (int i = 0; i < 6; ++i) admitted += Translate(ports[i % 2], "") == 200;
  EXPECT_EQ(admitted, 3);
  // Redis forgets its scripts (SCRIPT FLUSH, as a restart does): the
  // servers call the script by its SHA-1, are told NOSCRIPT, and send it
  // again, with no failure: the key's 1 a minute, in all.
  const testing_util::CommandResult flushed = testing_util::RunCommand(
      "redis-cli -p " + std::to_string(redis.port()) + " SCRIPT FLUSH 2>&1");
  ASSERT_EQ(flushed.exit_code, 0) << flushed.output;
  admitted = 0;
  for (int i = 0; i < 4; ++i) {
    admitted += Translate(ports[i % 2], "flushed") == 200;
  }
  EXPECT_EQ(admitted, 1);
  for (const auto& server : {first.get(), second.get()}) {
    const std::string metrics =
        testing_util::HttpGet(server->metrics_port(), "/metrics");
    EXPECT_EQ(testing_util::MetricValue(metrics, "fanyi_http_limits_redis_up"),
              1);
    EXPECT_EQ(testing_util::MetricValue(
                  metrics, "fanyi_http_limits_redis_failures_total"),
              0);
  }

  // Redis gone: both go on serving, each at its own 2 a minute.
  redis.Kill();
  admitted = 0;
  for (int i = 0; i < 6; ++i)
    admitted += Translate(ports[i % 2], "later") == 200;
  EXPECT_EQ(admitted, 4);
  for (const auto& server : {first.get(), second.get()}) {
    const std::string metrics =
        testing_util::HttpGet(server->metrics_port(), "/metrics");
    EXPECT_EQ(testing_util::MetricValue(metrics, "fanyi_http_limits_redis_up"),
              0);
    EXPECT_GE(testing_util::MetricValue(
                  metrics, "fanyi_http_limits_redis_failures_total"),
              1);
  }
  // A bad URL is refused at start.
  EXPECT_THROW(TranslationServer::Start(Options("redis://:7", keys_db)),
               std::invalid_argument);
}

}  // namespace
}  // namespace fanyi
