// Several models in one server, from a model repository: an English to
// Chinese and a Chinese to English model, really trained, each answering in
// its own direction; an unknown pair refused with the list; ListModels; a
// new version swapped in under load without a request lost, each answer
// naming its version; a corrupt version refused while the old one keeps
// answering, health SERVING throughout, and skipped at start-up for the one
// below it; removed folders unloaded; health per model, a broken model
// serving again once replaced; metrics through a reload and a rollback.
#include "server/model_repository.h"

#include <gtest/gtest.h>
#include <torch/cuda.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "client/health_check.h"
#include "common/model/checkpoint.h"
#include "common/pipeline/translator.h"
#include "common/text/parallel_corpus.h"
#include "common/text/utf8.h"
#include "fanyi/v1/translator.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "server/translation_server.h"
#include "tests/controlled_engine.h"
#include "tests/html_structure.h"
#include "tests/server_test_util.h"
#include "tests/test_util.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// The thirty training pairs both tiny models learn, in both directions.
struct Models {
  std::string en_zh;  // Checkpoint directories.
  std::string zh_en;
  std::vector<SentencePair> pairs;
};

const Models& TrainedModels() {
  static const Models* const models = [] {
    auto* trained = new Models();
    const std::string parent = testing_util::MakeTempDir("repository_models");
    trained->en_zh = testing_util::TrainTinyModel(parent, 30);
    trained->zh_en = testing_util::TrainTinyReverseModel(parent);
    trained->pairs =
        ReadParallelTsv(
            (fs::path(parent) / "tiny_model" / "pairs.tsv").string())
            .pairs;
    return trained;
  }();
  return *models;
}

using testing_util::AddModelVersion;

// What the checkpoint in `model_dir` translates `text` into in process,
// greedy, as the server's decoding does on this host: a tiny model's exact
// words change with the CPU's arithmetic (AVX2, AVX-512, int8), so the
// server is held to its own engine's answer, never to the training pair.
std::string InProcess(const std::string& model_dir, const std::string& text) {
  static std::mutex mutex;
  static auto* translators =
      new std::map<std::string, std::unique_ptr<Translator>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Translator>& translator = (*translators)[model_dir];
  if (translator == nullptr) {
    TranslatorOptions options;
    options.device = "cpu";
    translator = Translator::Load(model_dir, options);
  }
  TextOptions greedy;
  greedy.beam_size = 1;
  return translator->TranslateTexts({text}, greedy).at(0).text;
}

// The in-process translations of `text` by the tiny models.
std::string InProcessEnZh(const std::string& text) {
  return InProcess(TrainedModels().en_zh, text);
}
std::string InProcessZhEn(const std::string& text) {
  return InProcess(TrainedModels().zh_en, text);
}

// Engines of models from `language` refuse every sentence.
testing_util::EngineControl::Refusal RefuseFrom(const std::string& language) {
  return [language](const Translator& translator, const EncodedSource&) {
    return translator.source_language() == language;
  };
}

// Copies checkpoint `from` into `repository`/`name`/`version` with its
// weights cut in half, as a copy interrupted midway would leave them.
void AddCorruptVersion(const std::string& repository, const std::string& name,
                       int version, const std::string& from) {
  const fs::path staging =
      fs::path(repository) / name / (std::to_string(version) + ".tmp");
  fs::create_directories(staging.parent_path());
  fs::copy(from, staging, fs::copy_options::recursive);
  const fs::path weights = staging / "model.pt";
  fs::resize_file(weights, fs::file_size(weights) / 2);
  fs::rename(staging, fs::path(repository) / name / std::to_string(version));
}

// The folder where tests/ctranslate2_translations.py wrote an English to
// German Argos package of random weights (argos/, and the same as
// translate-en_de-1_0.argosmodel), made once; empty when it failed.
const std::string& ArgosPackages() {
  static const std::string* const made = [] {
    auto* folder =
        new std::string(testing_util::MakeTempDir("repository_argos"));
    const std::string command =
        std::string("python3 '") + FANYI_SOURCE_DIR +
        "/tests/ctranslate2_translations.py' '" + *folder + "' '" +
        testing_util::SharedDataPath("en-zh/train_mini.tsv") + "' >'" +
        *folder + "/python.log' 2>&1";
    if (std::system(command.c_str()) != 0) folder->clear();
    return folder;
  }();
  return *made;
}

class ModelRepositoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    repository_ = testing_util::MakeTempDir("model_repository") + "/models";
    AddModelVersion(repository_, "en-zh", 1, TrainedModels().en_zh);
    AddModelVersion(repository_, "zh-en", 1, TrainedModels().zh_en);
  }

  // A test that stopped half-way may have left steps held: the server
  // drains them on shutdown.
  void TearDown() override { engines_.SetGateOpen(true); }

  // Adds the English to German Argos package (ArgosPackages) to the
  // repository as its folder translate-en_de-1_0; false when it could not
  // be made.
  bool AddArgosPackage() {
    if (ArgosPackages().empty()) {
      ADD_FAILURE() << "tests/ctranslate2_translations.py needs python3's "
                       "ctranslate2 and sentencepiece";
      return false;
    }
    fs::copy(ArgosPackages() + "/argos",
             fs::path(repository_) / "translate-en_de-1_0",
             fs::copy_options::recursive);
    return true;
  }

  // `cache_bytes`, `device`: ServerOptions'.
  void StartServer(int64_t cache_bytes = 0, const std::string& device = "cpu") {
    ServerOptions options;
    options.cache_bytes = cache_bytes;
    options.model_repository = repository_;
    options.repository_poll_ms = 20;
    options.engine_factory = [this](const Translator& translator) {
      return engines_.NewEngine(translator);
    };
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mutex_);
      log_.push_back(line);
    };
    options.listen = "127.0.0.1:0";
    options.metrics_listen = "127.0.0.1:0";
    options.http_listen = "127.0.0.1:0";
    options.threads = 1;
    options.device = device;
    server_ = TranslationServer::Start(options);
    channel_ =
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->grpc_port()),
                            grpc::InsecureChannelCredentials());
    stub_ = v1::Translator::NewStub(channel_);
  }

  // Translates `text` with the model `source`->`target` names ("" for
  // none), greedy, with a 30 s deadline.
  grpc::Status Translate(const std::string& text, const std::string& source,
                         const std::string& target,
                         v1::TranslateResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    v1::TranslateRequest request;
    request.set_text(text);
    request.set_beam_size(1);
    request.mutable_model()->set_source_language(source);
    request.mutable_model()->set_target_language(target);
    return stub_->Translate(&context, request, response);
  }

  // Sends `text` to model source->target `count` times, one after the other;
  // how many answers had `code`.
  int TranslateTimes(int count, const std::string& text,
                     const std::string& source, const std::string& target,
                     grpc::StatusCode code) {
    int matching = 0;
    for (int i = 0; i < count; ++i) {
      v1::TranslateResponse response;
      matching +=
          Translate(text, source, target, &response).error_code() == code;
    }
    return matching;
  }

  // Polls the health of `service` until it reads `status`; false after 60 s.
  bool WaitForHealth(const std::string& service, const std::string& status) {
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (HealthStatus(channel_, std::chrono::seconds(10), service) !=
           status) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

  // Whether a log line so far contains every one of `parts`.
  bool Logged(const std::vector<std::string>& parts) {
    std::lock_guard<std::mutex> lock(log_mutex_);
    for (const std::string& line : log_) {
      bool all = true;
      for (const std::string& part : parts) {
        all = all && line.find(part) != std::string::npos;
      }
      if (all) return true;
    }
    return false;
  }

  std::string LogText() {
    std::lock_guard<std::mutex> lock(log_mutex_);
    std::string text;
    for (const std::string& line : log_) text += line + "\n";
    return text;
  }

  // Waits up to 60 s for a log line holding every one of `parts`.
  bool WaitForLog(const std::vector<std::string>& parts) {
    const auto give_up =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!Logged(parts)) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
  }

  std::string repository_;
  testing_util::EngineControl engines_;  // Outlives the server's engines.
  // The log outlives the server, whose repository thread writes to it
  // until the server is destroyed.
  std::mutex log_mutex_;
  std::vector<std::string> log_;  // Guarded by log_mutex_.
  std::unique_ptr<TranslationServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Translator::Stub> stub_;
};

bool HasCapital(const std::string& text) {
  for (const char c : text) {
    if (std::isupper(static_cast<unsigned char>(c))) return true;
  }
  return false;
}

// Both directions at once, from eight threads, each sentence once each way:
// each answer comes from the model its request named, in that model's
// direction, is what that model gives the sentence alone in process, and
// the English comes back cased.
TEST_F(ModelRepositoryTest, ServesBothDirectionsConcurrently) {
  StartServer();
  const std::vector<SentencePair>& pairs = TrainedModels().pairs;
  std::vector<std::string> expected_zh, expected_en;
  for (const SentencePair& pair : pairs) {
    expected_zh.push_back(InProcessEnZh(pair.source));
    expected_en.push_back(InProcessZhEn(pair.target));
  }
  std::atomic<int> failures{0}, same_zh{0}, same_en{0}, cased{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const bool to_english = t % 2 == 1;
      for (int i = t / 2; i < 30; i += 4) {
        const SentencePair& pair = pairs[static_cast<size_t>(i)];
        v1::TranslateResponse response;
        const grpc::Status status =
            to_english ? Translate(pair.target, "zh", "en", &response)
                       : Translate(pair.source, "en", "zh", &response);
        if (!status.ok() ||
            response.model().name() != (to_english ? "zh-en" : "en-zh") ||
            response.model().version() != 1) {
          ++failures;
          continue;
        }
        const std::string& text = response.translation().text();
        if (to_english) {
          same_en += text == expected_en[static_cast<size_t>(i)];
          cased += HasCapital(text);
        } else {
          same_zh += text == expected_zh[static_cast<size_t>(i)];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(same_zh.load(), 30);
  EXPECT_EQ(same_en.load(), 30);
  // The tiny model learnt its thirty pairs (as in trainer_test), capitals
  // included.
  EXPECT_GE(cased.load(), 28) << "the English should keep its capitals";
}

TEST_F(ModelRepositoryTest, AnUnknownPairIsRefusedWithTheServedPairs) {
  StartServer();
  v1::TranslateResponse response;
  grpc::Status status = Translate("Bonjour.", "fr", "en", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("en-zh (en->zh), zh-en (zh->en)"),
            std::string::npos)
      << status.error_message();
  // Two models served: a request must name one.
  status = Translate("Hello.", "", "", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("several models"), std::string::npos)
      << status.error_message();
  // One language is enough when it is unambiguous.
  status = Translate("Hello.", "en", "", &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.model().name(), "en-zh");
}

// /detect with a list q and two source languages served: one ranking, as
// LibreTranslate gives it, each language's confidence averaged over the
// texts it was found in and ranked by that average times those texts'
// length in characters.
TEST_F(ModelRepositoryTest, DetectRanksAListAcrossTheServedLanguages) {
  StartServer();
  const std::vector<std::string> texts = {
      "Good morning, how are you today? The weather is lovely.",
      "今天天气很好。", "我们去公园散步吧，好吗？"};
  const auto detect = [this](const nlohmann::json& q) {
    const testing_util::HttpAnswer answer = testing_util::HttpPostJson(
        server_->http_port(), "/detect", nlohmann::json({{"q", q}}).dump());
    EXPECT_EQ(answer.status, 200) << answer.body;
    return nlohmann::json::parse(answer.body);
  };
  // Each text alone, then the expected ranking from them.
  std::map<std::string, std::pair<double, int>> confidences;  // Sum, texts.
  std::map<std::string, double> characters;
  for (const std::string& text : texts) {
    const double length = static_cast<double>(DecodeUtf8(text).size());
    for (const nlohmann::json& found : detect(text)) {
      auto& [sum, count] = confidences[found["language"]];
      sum += found["confidence"].get<double>();
      ++count;
      characters[found["language"]] += length;
    }
  }
  ASSERT_EQ(confidences.size(), 2u);
  const nlohmann::json ranking = detect(texts);
  ASSERT_EQ(ranking.size(), 2u) << ranking.dump();
  double previous = 1e300;
  for (const nlohmann::json& found : ranking) {
    const auto& [sum, count] = confidences.at(found["language"]);
    EXPECT_DOUBLE_EQ(found["confidence"].get<double>(), sum / count);
    const double weight = sum / count * characters.at(found["language"]);
    EXPECT_LE(weight, previous) << ranking.dump();
    previous = weight;
  }
}

TEST_F(ModelRepositoryTest, ListModelsDescribesEachModel) {
  StartServer();
  grpc::ClientContext context;
  v1::ListModelsResponse response;
  ASSERT_TRUE(
      stub_->ListModels(&context, v1::ListModelsRequest(), &response).ok());
  ASSERT_EQ(response.models_size(), 2);
  const v1::ModelInfo& en_zh = response.models(0);
  EXPECT_EQ(en_zh.model().name(), "en-zh");
  EXPECT_EQ(en_zh.model().version(), 1);
  EXPECT_EQ(en_zh.source_language(), "en");
  EXPECT_EQ(en_zh.target_language(), "zh");
  EXPECT_EQ(en_zh.scripts_size(), 3);
  EXPECT_GT(en_zh.source_vocabulary_size(), 4);
  EXPECT_EQ(en_zh.device(), "cpu");
  EXPECT_FALSE(en_zh.source_script_normalized());
  const v1::ModelInfo& zh_en = response.models(1);
  EXPECT_EQ(zh_en.model().name(), "zh-en");
  EXPECT_EQ(zh_en.source_language(), "zh");
  EXPECT_EQ(zh_en.scripts_size(), 0);
  EXPECT_TRUE(zh_en.cased_output());
  EXPECT_TRUE(zh_en.source_script_normalized());
  const Checkpoint checkpoint =
      LoadCheckpoint(TrainedModels().zh_en, torch::kCPU);
  EXPECT_EQ(zh_en.length_penalty(), checkpoint.length_penalty);
  EXPECT_EQ(zh_en.source_vocabulary_size(),
            checkpoint.source_vocabulary.size());
  EXPECT_EQ(zh_en.target_vocabulary_size(),
            checkpoint.target_vocabulary.size());
}

// Version 2 appears while four threads keep the English to Chinese model
// busy: every request is answered, each names the version that produced it,
// a thread never goes back from 2 to 1, version 1 is unloaded once idle,
// and health stays SERVING.
TEST_F(ModelRepositoryTest, ANewVersionSwapsInUnderLoadLosingNothing) {
  StartServer();
  const std::vector<SentencePair>& pairs = TrainedModels().pairs;
  std::atomic<bool> stop{false};
  std::atomic<int> answered{0}, failed{0}, went_back{0}, by_version_2{0};
  std::atomic<int> not_serving{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      int64_t last_version = 0;
      for (int i = t; !stop.load(); ++i) {
        v1::TranslateResponse response;
        const grpc::Status status = Translate(
            pairs[static_cast<size_t>(i % 30)].source, "en", "zh", &response);
        if (!status.ok()) {
          ++failed;
          continue;
        }
        ++answered;
        const int64_t version = response.model().version();
        went_back += version < last_version;
        by_version_2 += version == 2;
        last_version = version;
      }
    });
  }
  std::thread health([&] {
    while (!stop.load()) {
      not_serving +=
          HealthStatus(channel_, std::chrono::seconds(10)) != "SERVING";
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  while (answered.load() < 40) std::this_thread::yield();
  AddModelVersion(repository_, "en-zh", 2, TrainedModels().en_zh);
  ASSERT_TRUE(WaitForLog({"model en-zh version 2 serving"})) << LogText();
  // Each thread may have had one request under way at the swap, which
  // version 1 answers: 40 answers more than those.
  const int at_swap = answered.load() + static_cast<int>(threads.size());
  while (answered.load() < at_swap + 40) std::this_thread::yield();
  stop = true;
  for (std::thread& thread : threads) thread.join();
  health.join();

  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(went_back.load(), 0);
  EXPECT_GE(by_version_2.load(), 40);
  EXPECT_EQ(not_serving.load(), 0);
  EXPECT_TRUE(WaitForLog({"model en-zh version 1 unloaded"})) << LogText();
}

// With a translation cache, a new version never answers from the old
// version's translations: the same text asked again is translated again.
TEST_F(ModelRepositoryTest, ANewVersionTranslatesWhatTheOldOneCached) {
  StartServer(/*cache_bytes=*/1 << 20);
  const std::string request =
      R"({"q": "I like tea.", "source": "en", "target": "zh"})";
  const auto misses = [&] {
    return testing_util::MetricValue(
        testing_util::HttpGet(server_->metrics_port(), "/metrics"),
        "fanyi_cache_misses_total");
  };
  ASSERT_EQ(
      testing_util::HttpPostJson(server_->http_port(), "/translate", request)
          .status,
      200);
  ASSERT_EQ(
      testing_util::HttpPostJson(server_->http_port(), "/translate", request)
          .status,
      200);
  EXPECT_EQ(misses(), 1);  // The second came from the cache.
  AddModelVersion(repository_, "en-zh", 2, TrainedModels().en_zh);
  ASSERT_TRUE(WaitForLog({"model en-zh version 2 serving"})) << LogText();
  ASSERT_TRUE(WaitForLog({"model en-zh version 1 unloaded"})) << LogText();
  ASSERT_EQ(
      testing_util::HttpPostJson(server_->http_port(), "/translate", request)
          .status,
      200);
  EXPECT_EQ(misses(), 2);
}

// A version whose weights were cut short is refused, the log naming the
// file; version 1 keeps answering and health stays SERVING. Mended, the
// same folder is loaded at the next poll.
TEST_F(ModelRepositoryTest, ACorruptVersionIsRefusedAndTheOldOneKeepsServing) {
  StartServer();
  AddCorruptVersion(repository_, "zh-en", 2, TrainedModels().zh_en);
  ASSERT_TRUE(WaitForLog(
      {"model zh-en version 2 refused", "model.pt", "version 1 keeps serving"}))
      << LogText();

  v1::TranslateResponse response;
  const SentencePair& pair = TrainedModels().pairs[3];
  const grpc::Status status = Translate(pair.target, "zh", "en", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.model().version(), 1);
  EXPECT_EQ(response.translation().text(), InProcessZhEn(pair.target));
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10)), "SERVING");

  fs::copy_file(fs::path(TrainedModels().zh_en) / "model.pt",
                fs::path(repository_) / "zh-en" / "2" / "model.pt",
                fs::copy_options::overwrite_existing);
  EXPECT_TRUE(WaitForLog({"model zh-en version 2 serving"})) << LogText();
}

// Folders removed from the repository: a removed version brings back the
// one below it, a removed model is unloaded, and the last model served is
// kept until another one comes.
TEST_F(ModelRepositoryTest, RemovedFoldersAreUnloadedButTheLastModelStays) {
  StartServer();
  const fs::path repository(repository_);
  const SentencePair& pair = TrainedModels().pairs[5];
  v1::TranslateResponse response;

  AddModelVersion(repository_, "en-zh", 2, TrainedModels().en_zh);
  ASSERT_TRUE(WaitForLog({"model en-zh version 2 serving"})) << LogText();
  fs::remove_all(repository / "en-zh" / "2");
  ASSERT_TRUE(WaitForLog(
      {"model en-zh version 1 serving", "version 2 finishes what it holds"}))
      << LogText();
  ASSERT_TRUE(Translate(pair.source, "en", "zh", &response).ok());
  EXPECT_EQ(response.model().version(), 1);

  fs::remove_all(repository / "zh-en");
  ASSERT_TRUE(WaitForLog({"model zh-en version 1 unloaded"})) << LogText();
  EXPECT_TRUE(Logged(
      {"model zh-en version 1 is no longer in", "it finishes what it holds"}))
      << LogText();
  grpc::Status status = Translate(pair.target, "zh", "en", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("served: en-zh (en->zh)"),
            std::string::npos)
      << status.error_message();
  EXPECT_EQ(status.error_message().find("zh-en"), std::string::npos)
      << status.error_message();
  status = Translate(pair.source, "", "", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.translation().text(), InProcessEnZh(pair.source));

  fs::remove_all(repository / "en-zh");
  ASSERT_TRUE(WaitForLog({"model en-zh version 1 is no longer in",
                          "it keeps serving, as the only model"}))
      << LogText();
  // A poll after that one has passed once a broken model is refused.
  AddCorruptVersion(repository_, "de-en", 1, TrainedModels().zh_en);
  ASSERT_TRUE(WaitForLog({"model de-en version 1 refused"})) << LogText();
  fs::remove_all(repository / "de-en");
  status = Translate(pair.source, "", "", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.translation().text(), InProcessEnZh(pair.source));
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10)), "SERVING");

  // With another model back, the one kept goes.
  AddModelVersion(repository_, "zh-en", 1, TrainedModels().zh_en);
  ASSERT_TRUE(WaitForLog(
      {"model en-zh version 1 is no longer in", "it finishes what it holds"}))
      << LogText();
  status = Translate(pair.target, "", "", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.model().name(), "zh-en");
  EXPECT_EQ(response.translation().text(), InProcessZhEn(pair.target));
}

// A broken highest version does not keep a (re)starting server down: the
// version below it serves, the refusal is logged naming the file, and the
// broken one is loaded once it is mended.
TEST_F(ModelRepositoryTest, StartUpServesTheHighestVersionThatLoads) {
  AddCorruptVersion(repository_, "en-zh", 2, TrainedModels().en_zh);
  StartServer();
  EXPECT_TRUE(Logged({"model en-zh version 2 refused", "model.pt"}))
      << LogText();
  const SentencePair& pair = TrainedModels().pairs[4];
  v1::TranslateResponse response;
  ASSERT_TRUE(Translate(pair.source, "en", "zh", &response).ok());
  EXPECT_EQ(response.model().version(), 1);
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10), "en-zh"),
            "SERVING");

  fs::copy_file(fs::path(TrainedModels().en_zh) / "model.pt",
                fs::path(repository_) / "en-zh" / "2" / "model.pt",
                fs::copy_options::overwrite_existing);
  ASSERT_TRUE(WaitForLog({"model en-zh version 2 serving"})) << LogText();
  ASSERT_TRUE(Translate(pair.source, "en", "zh", &response).ok());
  EXPECT_EQ(response.model().version(), 2);
}

// --device=auto on a machine without a GPU decodes on the CPU and says why,
// so that an operator who gave the container a GPU learns it is not used.
TEST_F(ModelRepositoryTest, AutoWithoutAGpuSaysItDecodesOnTheCpu) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a GPU is visible";
  StartServer(0, "auto");
  EXPECT_TRUE(Logged(
      {"--device=auto", "no CUDA device is visible", "decoding on the CPU"}))
      << LogText();
  v1::TranslateResponse response;
  EXPECT_TRUE(
      Translate(TrainedModels().pairs[4].source, "en", "zh", &response).ok());
}

// argos-translate's packages folder is a repository too: a package (one
// as argos-train lays them out, from tests/ctranslate2_translations.py) is
// served beside the fanyi models, named for its folder, in its languages.
TEST_F(ModelRepositoryTest, ServesArgosPackagesBesideFanyiModels) {
  ASSERT_TRUE(AddArgosPackage());
  const std::string made = ArgosPackages();
  StartServer();
  v1::TranslateResponse response;
  ASSERT_TRUE(Translate("Where is the station?", "en", "de", &response).ok());
  EXPECT_EQ(response.model().name(), "translate-en_de-1_0");
  EXPECT_EQ(response.model().version(), 1);
  ASSERT_TRUE(
      Translate(TrainedModels().pairs[4].source, "en", "zh", &response).ok());
  EXPECT_EQ(response.model().name(), "en-zh");

  // The same package as a file too: two models of en-de, so a request names
  // one (the error lists them).
  fs::copy(made + "/translate-en_de-1_0.argosmodel", repository_);
  ASSERT_TRUE(WaitForLog({"translate-en_de-1_0.argosmodel version 1 serving"}))
      << LogText();
  const grpc::Status both = Translate("Hello.", "en", "de", &response);
  EXPECT_EQ(both.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(both.error_message().find("several served models match"),
            std::string::npos)
      << both.error_message();
  grpc::ClientContext context;
  v1::TranslateRequest request;
  request.set_text("Hello.");
  request.mutable_model()->set_model("translate-en_de-1_0.argosmodel");
  ASSERT_TRUE(stub_->Translate(&context, request, &response).ok());
  EXPECT_EQ(response.model().name(), "translate-en_de-1_0.argosmodel");

  // A Mastodon instance's batch of HTML posts, through the package over
  // LibreTranslate's API: its model never learned placeholders, yet every
  // element comes back once, in place, and a mention marked translate="no"
  // byte for byte.
  const std::string mention =
      "<span class=\"h-card\" translate=\"no\"><a "
      "href=\"https://social.example/@alice\" class=\"u-url mention\">"
      "@<span>alice</span></a></span>";
  const std::vector<std::string> posts = {
      "<p>" + mention + " Where is the <b>station</b>?</p>",
      "<p>Good morning.<br>I love <i>tea</i> and <a "
      "href=\"https://example.org/\">coffee</a>.</p>"};
  const std::string body = nlohmann::json({{"q", posts},
                                           {"source", "en"},
                                           {"target", "de"},
                                           {"format", "html"},
                                           {"model", "translate-en_de-1_0"}})
                               .dump();
  const testing_util::HttpAnswer answer =
      testing_util::HttpPostJson(server_->http_port(), "/translate", body);
  ASSERT_EQ(answer.status, 200) << answer.body;
  const std::vector<std::string> out =
      nlohmann::json::parse(answer.body).at("translatedText");
  ASSERT_EQ(out.size(), posts.size()) << answer.body;
  for (std::size_t i = 0; i < posts.size(); ++i) {
    EXPECT_EQ(testing_util::HtmlStructure(out[i]),
              testing_util::HtmlStructure(posts[i]))
        << out[i];
  }
  EXPECT_NE(out[0].find(mention), std::string::npos) << out[0];

  // deep-translator's LibreTranslate client, unchanged, through the
  // package (now one of two en-de models, so by the pair it is refused;
  // the file copy is removed first).
  fs::remove(repository_ + "/translate-en_de-1_0.argosmodel");
  ASSERT_TRUE(WaitForLog({"translate-en_de-1_0.argosmodel", "unloaded"}))
      << LogText();
  const testing_util::CommandResult client = testing_util::RunCommand(
      "python3 - <<'EOF' 2>&1\n"
      "from deep_translator import LibreTranslator\n"
      "print(LibreTranslator(source='en', target='de', api_key='any',\n"
      "    custom_url='http://127.0.0.1:" +
      std::to_string(server_->http_port()) +
      "/').translate('Where is the station?'))\nEOF\n");
  ASSERT_EQ(client.exit_code, 0) << client.output;
  // It asks for the server's default beam, as does a request that names
  // none.
  grpc::ClientContext default_context;
  v1::TranslateRequest default_beam;
  default_beam.set_text("Where is the station?");
  default_beam.mutable_model()->set_source_language("en");
  default_beam.mutable_model()->set_target_language("de");
  ASSERT_TRUE(stub_->Translate(&default_context, default_beam, &response).ok());
  EXPECT_EQ(client.output, response.translation().text() + "\n");
}

// A pair no model serves is translated through English when one model
// translates into English and another out of it, as Argos Translate does:
// here Chinese to German, by the fanyi zh-en model and then the Argos
// en-de package. Over gRPC (Translate, TranslateBatch) and HTTP (fanyi's
// /translate and /languages, and libretranslatepy), each text comes out as
// the two models give it one after the other, and the answer names both.
TEST_F(ModelRepositoryTest, TranslatesThroughEnglishWhereNoModelServesThePair) {
  ASSERT_TRUE(AddArgosPackage());
  StartServer();
  // What the two models give one after the other.
  const auto chained = [this](const std::string& text) {
    v1::TranslateResponse english, german;
    EXPECT_TRUE(Translate(text, "zh", "en", &english).ok());
    EXPECT_TRUE(
        Translate(english.translation().text(), "en", "de", &german).ok());
    return german.translation().text();
  };
  const std::string text = TrainedModels().pairs[3].target;
  v1::TranslateResponse response;
  const grpc::Status status = Translate(text, "zh", "de", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.translation().text(), chained(text));
  EXPECT_EQ(response.model().name(), "translate-en_de-1_0");
  EXPECT_EQ(response.pivot_model().name(), "zh-en");
  EXPECT_EQ(response.pivot_language(), "en");
  EXPECT_GT(response.translation().source_token_count(), 0);
  EXPECT_GT(response.translation().confidence(), 0);
  EXPECT_LE(response.translation().confidence(), 1);

  grpc::ClientContext context;
  v1::TranslateBatchRequest batch;
  for (int i : {5, 9}) batch.add_texts(TrainedModels().pairs[i].target);
  batch.set_beam_size(1);
  batch.mutable_model()->set_source_language("zh");
  batch.mutable_model()->set_target_language("de");
  v1::TranslateBatchResponse translations;
  ASSERT_TRUE(stub_->TranslateBatch(&context, batch, &translations).ok());
  ASSERT_EQ(translations.translations_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(translations.translations(i).text(), chained(batch.texts(i)));
  }
  EXPECT_EQ(translations.pivot_model().name(), "zh-en");

  // The package was trained without placeholders: a glossary is refused
  // before anything decodes. German into Chinese has no model into English.
  v1::TranslateRequest glossary;
  glossary.set_text(text);
  glossary.mutable_model()->set_source_language("zh");
  glossary.mutable_model()->set_target_language("de");
  auto* entry = glossary.add_glossary();
  entry->set_source(text.substr(0, 3));
  entry->set_target("X");
  grpc::ClientContext glossary_context;
  const grpc::Status refused =
      stub_->Translate(&glossary_context, glossary, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("glossary"), std::string::npos)
      << refused.error_message();
  EXPECT_EQ(Translate("Hallo.", "de", "zh", &response).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // HTTP: /languages lists German among Chinese's targets, and /translate
  // says which models translated.
  const nlohmann::json languages = nlohmann::json::parse(
      testing_util::HttpGet(server_->http_port(), "/languages"));
  bool zh_to_de = false;
  for (const nlohmann::json& language : languages) {
    if (language["code"] == "zh") {
      for (const nlohmann::json& target : language["targets"]) {
        zh_to_de |= target == "de";
      }
    }
  }
  EXPECT_TRUE(zh_to_de) << languages.dump();
  const std::string body =
      nlohmann::json(
          {{"q", text}, {"source", "zh"}, {"target", "de"}, {"beam_size", 1}})
          .dump();
  const auto post_translate = [this, &body] {
    return testing_util::HttpPostJson(server_->http_port(), "/translate", body);
  };
  const testing_util::HttpAnswer answer = post_translate();
  ASSERT_EQ(answer.status, 200) << answer.body;
  const nlohmann::json translated = nlohmann::json::parse(answer.body);
  EXPECT_EQ(translated["translatedText"], chained(text));
  EXPECT_EQ(translated["pivot"],
            nlohmann::json({{"language", "en"},
                            {"models", {"zh-en", "translate-en_de-1_0"}}}));

  // LibreTranslate's own Python client, unchanged (it asks for the
  // server's default beam).
  const testing_util::CommandResult client = testing_util::RunCommand(
      "python3 - <<'EOF' 2>&1\n"
      "from libretranslatepy import LibreTranslateAPI\n"
      "api = LibreTranslateAPI('http://127.0.0.1:" +
      std::to_string(server_->http_port()) +
      "/')\n"
      "print(api.translate(" +
      nlohmann::json(text).dump() + ", 'zh', 'de'))\nEOF\n");
  ASSERT_EQ(client.exit_code, 0) << client.output;
  v1::TranslateResponse english, german;
  grpc::ClientContext beam_context;
  v1::TranslateRequest beam;
  beam.set_text(text);
  beam.mutable_model()->set_source_language("zh");
  beam.mutable_model()->set_target_language("de");
  ASSERT_TRUE(stub_->Translate(&beam_context, beam, &german).ok());
  EXPECT_EQ(client.output, german.translation().text() + "\n");

  // A second model into English makes the pivot ambiguous: refused, naming
  // the models, over gRPC and HTTP.
  AddModelVersion(repository_, "zh-en-b", 1, TrainedModels().zh_en);
  ASSERT_TRUE(WaitForLog({"model zh-en-b version 1 serving"})) << LogText();
  const grpc::Status ambiguous = Translate(text, "zh", "de", &response);
  EXPECT_EQ(ambiguous.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(ambiguous.error_message().find("several would through en"),
            std::string::npos)
      << ambiguous.error_message();
  EXPECT_NE(ambiguous.error_message().find("zh-en-b"), std::string::npos)
      << ambiguous.error_message();
  const testing_util::HttpAnswer refused_http = post_translate();
  EXPECT_EQ(refused_http.status, 400) << refused_http.body;
  EXPECT_NE(refused_http.body.find("several would through en"),
            std::string::npos)
      << refused_http.body;
}

// With no version of any model loadable there is nothing to serve: the
// server does not start, and says which files it could not load.
TEST_F(ModelRepositoryTest, NoLoadableModelIsAStartUpErrorNamingTheFiles) {
  repository_ = testing_util::MakeTempDir("repository_broken") + "/models";
  AddCorruptVersion(repository_, "en-zh", 1, TrainedModels().en_zh);
  AddCorruptVersion(repository_, "zh-en", 3, TrainedModels().zh_en);
  try {
    StartServer();
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("could be loaded"), std::string::npos) << message;
    EXPECT_NE(message.find("en-zh/1/model.pt"), std::string::npos) << message;
    EXPECT_NE(message.find("zh-en/3/model.pt"), std::string::npos) << message;
  }
}

// Health is per model: one whose engine keeps failing turns NOT_SERVING
// while the other and the server go on serving; the server turns
// NOT_SERVING only when no model serves; a new version of the broken model
// serves again, and so does the server.
TEST_F(ModelRepositoryTest, HealthIsPerModelAndANewVersionServesAgain) {
  StartServer();
  const SentencePair& pair = TrainedModels().pairs[6];
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10), "zh-en"),
            "SERVING");
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10), "fr-en")
                .rfind("RPC failed: NOT_FOUND", 0),
            0u);

  // Makes the engines of model `source`->`target` refuse `text` three
  // times in a row, which stops its worker for good.
  auto break_model = [this](const std::string& text, const std::string& source,
                            const std::string& target) {
    engines_.SetRefusal(RefuseFrom(source));
    EXPECT_EQ(
        TranslateTimes(3, text, source, target, grpc::StatusCode::INTERNAL), 3);
  };
  break_model(pair.target, "zh", "en");
  ASSERT_TRUE(WaitForHealth("zh-en", "NOT_SERVING"));
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10), "en-zh"),
            "SERVING");
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10)), "SERVING");
  v1::TranslateResponse response;
  grpc::Status status = Translate(pair.target, "zh", "en", &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(status.error_message().find("new version"), std::string::npos)
      << status.error_message();
  ASSERT_TRUE(Translate(pair.source, "en", "zh", &response).ok());
  EXPECT_EQ(response.translation().text(), InProcessEnZh(pair.source));

  break_model(pair.source, "en", "zh");
  ASSERT_TRUE(WaitForHealth("", "NOT_SERVING"));
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10), "en-zh"),
            "NOT_SERVING");

  engines_.SetRefusal(nullptr);
  AddModelVersion(repository_, "zh-en", 2, TrainedModels().zh_en);
  ASSERT_TRUE(WaitForLog({"model zh-en version 2 serving"})) << LogText();
  ASSERT_TRUE(WaitForHealth("zh-en", "SERVING"));
  ASSERT_TRUE(WaitForHealth("", "SERVING"));
  EXPECT_EQ(HealthStatus(channel_, std::chrono::seconds(10), "en-zh"),
            "NOT_SERVING");
  status = Translate(pair.target, "zh", "en", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.model().version(), 2);
  EXPECT_EQ(response.translation().text(), InProcessZhEn(pair.target));
}

// The fanyi_model_info samples of `model` in a scrape whose
// repository_version label is `version`.
int ModelInfoSamples(const std::string& metrics, const std::string& model,
                     int version) {
  int samples = 0;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    samples += line.rfind("fanyi_model_info{", 0) == 0 &&
               line.find("model=\"" + model + "\"") != std::string::npos &&
               line.find("repository_version=\"" + std::to_string(version) +
                         "\"") != std::string::npos &&
               line.size() > 2 && line.substr(line.size() - 2) == " 1";
  }
  return samples;
}

// Through a reload and a rollback, while version 1 drains texts it holds:
// fanyi_queue_depth adds up the versions' queues, and fanyi_model_info shows
// each version loaded, the rolled-back one staying when its draining twin
// is unloaded.
TEST_F(ModelRepositoryTest, MetricsFollowAReloadAndARollback) {
  engines_.GateNewEngines(true);  // Version 1's.
  StartServer();
  engines_.GateNewEngines(false);
  const int port = server_->metrics_port();
  const std::string depth = "fanyi_queue_depth{model=\"en-zh\"}";
  const SentencePair& pair = TrainedModels().pairs[7];

  // Version 1 holds three texts: one decoding, its step held, two queued.
  engines_.SetGateOpen(false);
  std::vector<std::future<v1::TranslateResponse>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::async(std::launch::async, [&] {
      v1::TranslateResponse response;
      EXPECT_TRUE(Translate(pair.source, "en", "zh", &response).ok());
      return response;
    }));
    if (i == 0) ASSERT_TRUE(engines_.WaitForHeldSteps(1));
  }
  std::string metrics =
      testing_util::WaitForMetric(port, depth, 2, std::chrono::seconds(60));
  ASSERT_EQ(testing_util::MetricValue(metrics, depth), 2) << metrics;

  // Version 2 serves a text beside them: the depth is still theirs.
  AddModelVersion(repository_, "en-zh", 2, TrainedModels().en_zh);
  ASSERT_TRUE(WaitForLog({"model en-zh version 2 serving"})) << LogText();
  v1::TranslateResponse response;
  ASSERT_TRUE(Translate(pair.source, "en", "zh", &response).ok());
  EXPECT_EQ(response.model().version(), 2);
  metrics = testing_util::HttpGet(port, "/metrics");
  EXPECT_EQ(testing_util::MetricValue(metrics, depth), 2) << metrics;
  EXPECT_EQ(ModelInfoSamples(metrics, "en-zh", 1), 1) << metrics;
  EXPECT_EQ(ModelInfoSamples(metrics, "en-zh", 2), 1) << metrics;

  // Rolled back while version 1 still drains: version 1 loaded again.
  fs::remove_all(fs::path(repository_) / "en-zh" / "2");
  ASSERT_TRUE(WaitForLog({"model en-zh version 2 unloaded"})) << LogText();
  metrics = testing_util::HttpGet(port, "/metrics");
  EXPECT_EQ(ModelInfoSamples(metrics, "en-zh", 1), 1) << metrics;
  EXPECT_EQ(ModelInfoSamples(metrics, "en-zh", 2), 0) << metrics;

  // The draining version 1 answers and goes; the one loaded again stays.
  engines_.SetGateOpen(true);
  for (auto& answer : held) EXPECT_EQ(answer.get().model().version(), 1);
  ASSERT_TRUE(WaitForLog({"model en-zh version 1 unloaded"})) << LogText();
  metrics = testing_util::HttpGet(port, "/metrics");
  EXPECT_EQ(ModelInfoSamples(metrics, "en-zh", 1), 1) << metrics;
  EXPECT_EQ(testing_util::MetricValue(metrics, depth), 0) << metrics;
  ASSERT_TRUE(Translate(pair.source, "en", "zh", &response).ok());
  EXPECT_EQ(response.model().version(), 1);
  EXPECT_EQ(response.translation().text(), InProcessEnZh(pair.source));
}

TEST(ModelRepositoryScanTest, ListsEachModelsVersionsHighestFirst) {
  const std::string repository =
      testing_util::MakeTempDir("repository_scan") + "/models";
  for (const char* folder : {"en-zh/1", "en-zh/10", "en-zh/9", "en-zh/11.tmp",
                             "zh-en/3", "notes/draft", "de-en"}) {
    fs::create_directories(fs::path(repository) / folder);
  }
  std::ofstream(fs::path(repository) / "README");
  const std::vector<RepositoryVersion> versions =
      ModelRepository::Scan(repository);
  ASSERT_EQ(versions.size(), 4u);
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"en-zh", 10}, {"en-zh", 9}, {"en-zh", 1}, {"zh-en", 3}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(versions[i].name, expected[i].first) << i;
    EXPECT_EQ(versions[i].version, expected[i].second) << i;
  }
  EXPECT_EQ(versions[0].path, repository + "/en-zh/10");
  EXPECT_THROW(ModelRepository::Scan(repository + "/absent"),
               std::runtime_error);
}

TEST(ModelRepositoryScanTest, AServerWithAnEmptyRepositoryDoesNotStart) {
  const std::string repository = testing_util::MakeTempDir("repository_empty");
  ServerOptions options;
  options.model_repository = repository;
  options.listen = "127.0.0.1:0";
  options.metrics_listen = "127.0.0.1:0";
  try {
    TranslationServer::Start(options);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("holds no model"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace fanyi
