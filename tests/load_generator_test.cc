// Tests of the load generator against a real TranslationServer on
// 127.0.0.1:0 serving the tiny trained model; the fanyi-loadgen binary is run
// too. Nothing here asserts on speed.

#include "client/load_generator.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "server/translation_server.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

// Percentiles by nearest rank on known samples.
TEST(NearestRankPercentileTest, KnownSamples) {
  const std::vector<double> five = {15, 20, 35, 40, 50};
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  struct Case {
    const std::vector<double>* sorted;
    double p;
    double expected;
  };
  const std::vector<Case> cases = {
      {&five, 5, 15},      {&five, 20, 15},    {&five, 30, 20},
      {&five, 40, 20},     {&five, 50, 35},    {&five, 90, 50},
      {&five, 100, 50},    {&hundred, 1, 1},   {&hundred, 50, 50},
      {&hundred, 90, 90},  {&hundred, 99, 99}, {&hundred, 99.5, 100},
      {&hundred, 100, 100}};
  for (const Case& c : cases) {
    EXPECT_EQ(NearestRankPercentile(*c.sorted, c.p), c.expected)
        << "p" << c.p << " of " << c.sorted->size() << " samples";
  }
  EXPECT_EQ(NearestRankPercentile({7}, 0.1), 7);
  EXPECT_THROW(NearestRankPercentile({}, 50), std::invalid_argument);
  EXPECT_THROW(NearestRankPercentile(five, 0), std::invalid_argument);
  EXPECT_THROW(NearestRankPercentile(five, 101), std::invalid_argument);
}

TEST(ReadSourceTextsTest, TakesFirstColumnAndSkipsBlankLines) {
  const std::string path =
      testing_util::MakeTempDir("read_source_texts") + "/texts.tsv";
  std::ofstream(path) << "Hello.\t你好。\n\n   \nGood night.\r\nNo tab here\n";
  EXPECT_EQ(ReadSourceTexts(path),
            (std::vector<std::string>{"Hello.", "Good night.", "No tab here"}));
  EXPECT_THROW(ReadSourceTexts(path + ".missing"), std::runtime_error);
}

TEST(LoadOptionsTest, UnboundedOrInvalidRunsAreRefused) {
  LoadOptions valid;
  valid.server = "127.0.0.1:1";
  valid.texts = {"Hello."};
  EXPECT_NO_THROW(LoadGenerator{valid});

  LoadOptions unbounded = valid;
  unbounded.requests = 0;
  unbounded.duration_s = 0;
  EXPECT_THROW(LoadGenerator{unbounded}, std::invalid_argument);

  LoadOptions too_long = valid;
  too_long.duration_s = LoadOptions::kMaxDurationS + 1;
  EXPECT_THROW(LoadGenerator{too_long}, std::invalid_argument);

  LoadOptions no_concurrency = valid;
  no_concurrency.concurrency = 0;
  EXPECT_THROW(LoadGenerator{no_concurrency}, std::invalid_argument);

  LoadOptions no_texts = valid;
  no_texts.texts.clear();
  EXPECT_THROW(LoadGenerator{no_texts}, std::invalid_argument);

  LoadOptions no_sentences = valid;
  no_sentences.sentences_per_request = 0;
  EXPECT_THROW(LoadGenerator{no_sentences}, std::invalid_argument);

  LoadOptions ragged_bursts = valid;
  ragged_bursts.bursts = true;
  ragged_bursts.concurrency = 4;
  ragged_bursts.requests = 10;
  EXPECT_THROW(LoadGenerator{ragged_bursts}, std::invalid_argument);
  ragged_bursts.requests = 12;
  EXPECT_NO_THROW(LoadGenerator{ragged_bursts});
  ragged_bursts.warmup_requests = 2;
  EXPECT_THROW(LoadGenerator{ragged_bursts}, std::invalid_argument);

  LoadOptions open_bursts = valid;
  open_bursts.bursts = true;
  open_bursts.concurrency = 1;
  open_bursts.rate = 10;
  EXPECT_THROW(LoadGenerator{open_bursts}, std::invalid_argument);

  LoadOptions too_many_in_flight = valid;
  too_many_in_flight.max_in_flight = LoadOptions::kMaxInFlight + 1;
  EXPECT_THROW(LoadGenerator{too_many_in_flight}, std::invalid_argument);
}

class LoadGeneratorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (model_dir_ == nullptr) {
      model_dir_ = new std::string(testing_util::TrainTinyModel(
          testing_util::MakeTempDir("load_generator_test_model")));
      // The sentences the tiny model was trained on, with a blank line.
      texts_path_ = new std::string(
          testing_util::MakeTempDir("load_generator_test_texts") +
          "/texts.tsv");
      std::ifstream in(testing_util::SharedDataPath("en-zh/train_mini.tsv"));
      std::ofstream out(*texts_path_);
      std::string line;
      for (int i = 0; i < 30 && std::getline(in, line); ++i) {
        out << line << "\n" << (i == 10 ? "\n" : "");
      }
    }
  }

  static ServerOptions BaseServerOptions() {
    ServerOptions options;
    options.model_dir = *model_dir_;
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.threads = 1;
    options.device = "cpu";
    return options;
  }

  static LoadOptions BaseLoadOptions(const TranslationServer& server) {
    LoadOptions options;
    options.server = "127.0.0.1:" + std::to_string(server.grpc_port());
    options.texts = ReadSourceTexts(*texts_path_);
    options.timeout_ms = 60000;
    return options;
  }

  static std::string* model_dir_;
  static std::string* texts_path_;
};

std::string* LoadGeneratorTest::model_dir_ = nullptr;
std::string* LoadGeneratorTest::texts_path_ = nullptr;

// Runs `command` through the shell; returns its exit status and output.
std::pair<int, std::string> RunCommand(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed: " + command);
  std::string output;
  char buffer[4096];
  for (size_t read; (read = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) {
    output.append(buffer, read);
  }
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// The number of requests that ended with status `code`.
int64_t CountOf(const LoadReport& report, const std::string& code) {
  auto found = report.status_counts.find(code);
  return found == report.status_counts.end() ? 0 : found->second;
}

TEST_F(LoadGeneratorTest, ClosedLoopCompletesEveryRequest) {
  auto server = TranslationServer::Start(BaseServerOptions());
  LoadOptions options = BaseLoadOptions(*server);
  ASSERT_EQ(options.texts.size(), 30u);
  options.requests = 200;
  options.concurrency = 8;
  options.warmup_requests = 10;
  const LoadReport report = LoadGenerator(options).Run();

  EXPECT_EQ(report.mode, "closed");
  EXPECT_EQ(report.concurrency, 8);
  EXPECT_EQ(report.requests_sent, 200);  // Warmup left out.
  EXPECT_EQ(report.requests_completed, 200);
  EXPECT_EQ(report.status_counts,
            (std::map<std::string, int64_t>{{"OK", 200}}));
  EXPECT_EQ(report.ok_requests, 200);
  EXPECT_GT(report.generated_tokens, 0);
  EXPECT_GT(report.generated_tokens_per_second, 0);
  EXPECT_GT(report.sentences_per_second, 0);
  EXPECT_GT(report.wall_seconds, 0);
  EXPECT_GT(report.latency_p50_ms, 0);
  EXPECT_LE(report.latency_p50_ms, report.latency_p90_ms);
  EXPECT_LE(report.latency_p90_ms, report.latency_p99_ms);
  EXPECT_LE(report.latency_p99_ms, report.latency_max_ms);
  EXPECT_DOUBLE_EQ(report.requests_per_second, 200 / report.wall_seconds);
  // Each text is one sentence.
  EXPECT_EQ(report.sentences, 200);
  EXPECT_DOUBLE_EQ(report.sentences_per_second, report.requests_per_second);
  EXPECT_EQ(report.ok_bursts, 0);
  EXPECT_EQ(report.offered_rate, 0);
}

TEST_F(LoadGeneratorTest, OpenLoopSendsTheRequestedCount) {
  auto server = TranslationServer::Start(BaseServerOptions());
  LoadOptions options = BaseLoadOptions(*server);
  options.requests = 40;
  options.rate = 100;
  const LoadReport report = LoadGenerator(options).Run();

  EXPECT_EQ(report.mode, "open");
  EXPECT_EQ(report.offered_rate, 100);
  EXPECT_GT(report.send_rate, 0);
  EXPECT_EQ(report.requests_sent, 40);
  EXPECT_EQ(report.requests_completed, 40);
  EXPECT_EQ(CountOf(report, "OK"), 40);
  EXPECT_EQ(report.max_in_flight_waits, 0);
}

TEST_F(LoadGeneratorTest, DurationAloneBoundsAnOpenLoopRun) {
  auto server = TranslationServer::Start(BaseServerOptions());
  LoadOptions options = BaseLoadOptions(*server);
  options.requests = 0;
  options.duration_s = 0.3;
  options.rate = 50;  // About 15 arrivals in 0.3 s, not thousands.
  const LoadReport report = LoadGenerator(options).Run();

  EXPECT_GT(report.requests_sent, 0);
  EXPECT_LT(report.requests_sent, 1000);
  EXPECT_EQ(report.requests_completed, report.requests_sent);
}

TEST_F(LoadGeneratorTest, FullQueueRejectionsAreCountedByCode) {
  // One queued text at a time and one text per batch (the default beam's 4
  // rows): of 32 requests kept in flight, all but the one decoding and the
  // one queued are rejected.
  ServerOptions server_options = BaseServerOptions();
  server_options.max_queue = 1;
  server_options.max_batch_size = 4;
  server_options.max_beam_size = 4;
  server_options.max_batch_delay_ms = 50;
  auto server = TranslationServer::Start(server_options);
  LoadOptions options = BaseLoadOptions(*server);
  options.requests = 200;
  options.concurrency = 32;
  const LoadReport report = LoadGenerator(options).Run();

  EXPECT_EQ(report.requests_completed, 200);
  EXPECT_GT(CountOf(report, "RESOURCE_EXHAUSTED"), 0);
  EXPECT_GT(CountOf(report, "OK"), 0);
  EXPECT_EQ(CountOf(report, "OK") + CountOf(report, "RESOURCE_EXHAUSTED"), 200);
  // Latencies and throughput count OK requests only.
  EXPECT_EQ(report.ok_requests, CountOf(report, "OK"));
  EXPECT_DOUBLE_EQ(report.requests_per_second,
                   report.ok_requests / report.wall_seconds);
  // Each code seen has its slowest latency; OK's is the OK maximum.
  ASSERT_EQ(report.status_max_latency_ms.size(), 2u);
  EXPECT_EQ(report.status_max_latency_ms.at("OK"), report.latency_max_ms);
  EXPECT_GT(report.status_max_latency_ms.at("RESOURCE_EXHAUSTED"), 0);
}

// The same load over the HTTP API: every request answered, and a full queue
// counted under the status gRPC would give (429 -> RESOURCE_EXHAUSTED).
TEST_F(LoadGeneratorTest, HttpLoadsTheLibreTranslateApi) {
  ServerOptions server_options = BaseServerOptions();
  server_options.http_listen = "127.0.0.1:0";
  auto server = TranslationServer::Start(server_options);
  LoadOptions options = BaseLoadOptions(*server);
  options.http = true;
  options.server = "127.0.0.1:" + std::to_string(server->http_port());
  options.source_language = "en";
  options.target_language = "zh";
  options.requests = 100;
  options.concurrency = 8;
  options.warmup_requests = 8;
  const LoadReport report = LoadGenerator(options).Run();
  EXPECT_EQ(report.requests_completed, 100);
  EXPECT_EQ(report.status_counts,
            (std::map<std::string, int64_t>{{"OK", 100}}));
  EXPECT_EQ(report.sentences, 100);
  EXPECT_GT(report.latency_p50_ms, 0);

  server_options.max_queue = 1;
  server_options.max_batch_size = 4;
  server_options.max_beam_size = 4;
  server_options.max_batch_delay_ms = 50;
  auto small = TranslationServer::Start(server_options);
  options.server = "127.0.0.1:" + std::to_string(small->http_port());
  options.concurrency = 32;
  options.warmup_requests = 0;
  const LoadReport full = LoadGenerator(options).Run();
  EXPECT_EQ(full.requests_completed, 100);
  EXPECT_GT(CountOf(full, "RESOURCE_EXHAUSTED"), 0);
  EXPECT_EQ(CountOf(full, "OK") + CountOf(full, "RESOURCE_EXHAUSTED"), 100);
}

// Requests of five sentences each: the server counts every sentence of the
// texts (which are one sentence per line).
TEST_F(LoadGeneratorTest, DocumentsCountTheirSentences) {
  auto server = TranslationServer::Start(BaseServerOptions());
  LoadOptions options = BaseLoadOptions(*server);
  options.sentences_per_request = 5;
  options.requests = 6;
  options.concurrency = 2;
  const LoadReport report = LoadGenerator(options).Run();

  EXPECT_EQ(CountOf(report, "OK"), 6);
  EXPECT_EQ(report.sentences, 30);
  EXPECT_DOUBLE_EQ(report.sentences_per_second, 30 / report.wall_seconds);
  EXPECT_DOUBLE_EQ(report.requests_per_second, 6 / report.wall_seconds);
}

// Bursts of four: each burst's latency covers every request in it, so the
// slowest burst is at least as slow as the slowest request.
TEST_F(LoadGeneratorTest, BurstsAreTimedWhole) {
  auto server = TranslationServer::Start(BaseServerOptions());
  LoadOptions options = BaseLoadOptions(*server);
  options.bursts = true;
  options.concurrency = 4;
  options.requests = 20;
  options.warmup_requests = 4;
  const LoadReport report = LoadGenerator(options).Run();

  EXPECT_EQ(CountOf(report, "OK"), 20);
  EXPECT_EQ(report.ok_bursts, 5);
  EXPECT_GT(report.burst_latency_p50_ms, 0);
  EXPECT_LE(report.burst_latency_p50_ms, report.burst_latency_p90_ms);
  EXPECT_LE(report.burst_latency_p90_ms, report.burst_latency_max_ms);
  EXPECT_GE(report.burst_latency_max_ms, report.latency_max_ms);
  EXPECT_GE(report.burst_latency_p50_ms, report.latency_p50_ms);
  EXPECT_NE(report.ToTable().find("in bursts"), std::string::npos);
}

// The JSON report holds the same numbers as the report it was made from.
void ExpectJsonMatches(const nlohmann::json& json, const LoadReport& report) {
  EXPECT_EQ(json.at("mode"), report.mode);
  EXPECT_EQ(json.at("concurrency"), report.concurrency);
  EXPECT_EQ(json.at("offered_rate"), report.offered_rate);
  EXPECT_EQ(json.at("send_rate"), report.send_rate);
  EXPECT_EQ(json.at("requests_sent"), report.requests_sent);
  EXPECT_EQ(json.at("requests_completed"), report.requests_completed);
  EXPECT_EQ((json.at("status_counts").get<std::map<std::string, int64_t>>()),
            report.status_counts);
  EXPECT_EQ(
      (json.at("status_max_latency_ms").get<std::map<std::string, double>>()),
      report.status_max_latency_ms);
  EXPECT_EQ(json.at("ok_requests"), report.ok_requests);
  EXPECT_EQ(json.at("sentences"), report.sentences);
  EXPECT_EQ(json.at("requests_per_second"), report.requests_per_second);
  EXPECT_EQ(json.at("ok_bursts"), report.ok_bursts);
  EXPECT_EQ(json.at("burst_latency_ms").at("p50"), report.burst_latency_p50_ms);
  EXPECT_EQ(json.at("burst_latency_ms").at("p90"), report.burst_latency_p90_ms);
  EXPECT_EQ(json.at("burst_latency_ms").at("max"), report.burst_latency_max_ms);
  EXPECT_EQ(json.at("generated_tokens"), report.generated_tokens);
  EXPECT_EQ(json.at("wall_seconds"), report.wall_seconds);
  EXPECT_EQ(json.at("sentences_per_second"), report.sentences_per_second);
  EXPECT_EQ(json.at("generated_tokens_per_second"),
            report.generated_tokens_per_second);
  const nlohmann::json& latency = json.at("latency_ms");
  EXPECT_EQ(latency.at("p50"), report.latency_p50_ms);
  EXPECT_EQ(latency.at("p90"), report.latency_p90_ms);
  EXPECT_EQ(latency.at("p99"), report.latency_p99_ms);
  EXPECT_EQ(latency.at("max"), report.latency_max_ms);
  EXPECT_EQ(latency.at("mean"), report.latency_mean_ms);
}

TEST_F(LoadGeneratorTest, JsonReportHasTheSameNumbers) {
  auto server = TranslationServer::Start(BaseServerOptions());
  LoadOptions options = BaseLoadOptions(*server);
  options.requests = 50;
  options.concurrency = 4;
  const LoadReport report = LoadGenerator(options).Run();
  ExpectJsonMatches(nlohmann::json::parse(report.ToJson()), report);
}

TEST_F(LoadGeneratorTest, BinaryPrintsTableAndWritesJson) {
  auto server = TranslationServer::Start(BaseServerOptions());
  const std::string json_path =
      testing_util::MakeTempDir("loadgen_binary") + "/report.json";
  const std::string command =
      std::string(FANYI_BINARY_DIR) + "/bin/fanyi-loadgen --server=127.0.0.1:" +
      std::to_string(server->grpc_port()) + " --input=" + *texts_path_ +
      " --requests=30 --concurrency=4 --beam_size=2 --json=" + json_path +
      " 2>&1";
  const auto [exit_code, output] = RunCommand(command);
  ASSERT_EQ(exit_code, 0) << output;
  EXPECT_NE(output.find("closed loop, concurrency 4"), std::string::npos)
      << output;
  EXPECT_NE(output.find("p99"), std::string::npos) << output;

  std::ifstream json_file(json_path);
  ASSERT_TRUE(json_file) << "no JSON report at " << json_path;
  const nlohmann::json json = nlohmann::json::parse(json_file);
  EXPECT_EQ(json.at("requests_sent"), 30);
  EXPECT_EQ(json.at("requests_completed"), 30);
  EXPECT_EQ(json.at("status_counts").at("OK"), 30);
  EXPECT_GT(json.at("generated_tokens").get<int64_t>(), 0);
  EXPECT_LE(json.at("latency_ms").at("p50").get<double>(),
            json.at("latency_ms").at("max").get<double>());
}

TEST_F(LoadGeneratorTest, BinaryRefusesAnUnboundedRun) {
  const std::string command = std::string(FANYI_BINARY_DIR) +
                              "/bin/fanyi-loadgen --input=" + *texts_path_ +
                              " --requests=0 2>&1";
  const auto [exit_code, output] = RunCommand(command);
  EXPECT_EQ(exit_code, 1) << output;
  EXPECT_NE(output.find("neither a request count nor a duration"),
            std::string::npos)
      << output;
}

}  // namespace
}  // namespace fanyi
