#include "tests/test_util.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "trainer/trainer.h"

namespace fanyi::testing_util {

namespace fs = std::filesystem;

std::string SharedDataPath(const std::string& relative_path) {
  // scripts/test.sh names the corpus it found or downloaded (get-data.sh);
  // a test run by hand reads ../shared/data beside the checkout.
  const char* named = std::getenv("FANYI_TEST_DATA");
  const fs::path root =
      named != nullptr && *named != '\0' ? named : FANYI_SHARED_DATA_DIR;
  const fs::path path = root / relative_path;
  if (!fs::exists(path)) {
    throw std::runtime_error(
        "the tests' corpus has no " + path.string() +
        ": run scripts/test.sh, which finds ../shared/data or downloads "
        "Tatoeba's corpus with scripts/get-data.sh, or set FANYI_TEST_DATA "
        "to a folder holding en-zh/train.tsv, dev.tsv, train_mini.tsv and "
        "dev_mini.tsv");
  }
  return path.string();
}

namespace {

// This process's own folder in the test scratch space (TEST_TMPDIR, else
// /tmp), made by mkdtemp: two runs of the suite at once, from one checkout
// or two, never share a path. Removed when the process exits normally
// (children fork only to exec, so none removes it).
const fs::path& ProcessScratch() {
  static const struct Scratch {
    fs::path path;
    Scratch() {
      std::string pattern =
          (fs::path(::testing::TempDir()) / "fanyi-test-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) {
        throw std::runtime_error("cannot make a scratch folder from " +
                                 pattern);
      }
      path = pattern;
    }
    ~Scratch() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } scratch;
  return scratch.path;
}

}  // namespace

std::string Repeat(const std::string& piece, std::size_t times) {
  std::string text;
  text.reserve(piece.size() * times);
  for (std::size_t i = 0; i < times; ++i) text += piece;
  return text;
}

std::string MakeTempDir(const std::string& name) {
  const fs::path directory = ProcessScratch() / name;
  fs::remove_all(directory);
  fs::create_directories(directory);
  return directory.string();
}

TrainingOptions TinyTrainingOptions(const std::string& train_path,
                                    const std::string& out_dir) {
  TrainingOptions options;
  options.corpus.train_path = train_path;
  options.corpus.dev_path = train_path;
  options.out_dir = out_dir;
  options.model.encoder_layers = 1;
  options.model.decoder_layers = 1;
  options.model.d_model = 16;
  options.model.d_ff = 16;
  options.model.heads = 2;
  options.model.max_positions = 64;
  // Tiny corpora: every token counts, or most would be <unk>.
  options.corpus.vocab_min_count = 1;
  options.threads = 1;
  options.device = "cpu";
  options.show_progress = false;
  options.length_penalties.clear();  // Tests that want the choice ask.
  return options;
}

std::string TrainTinyModelOn(
    const std::string& pairs_path, const std::string& out_dir,
    const std::function<void(TrainingOptions&)>& adjust) {
  TrainingOptions options = TinyTrainingOptions(pairs_path, out_dir);
  options.model.d_model = 32;
  options.model.d_ff = 64;
  options.model.dropout = 0.0;
  options.epochs = 150;
  options.validate_every_epochs = 150;
  options.batch_tokens = 128;
  options.warmup_steps = 50;
  options.lr_factor = 2.0;
  options.label_smoothing = 0.0;
  if (adjust) adjust(options);
  std::ostringstream log;
  Trainer(options).Run(log);
  return (fs::path(out_dir) / "best").string();
}

std::string WriteTinyPairs(const std::string& dir, int pairs) {
  std::ifstream in(SharedDataPath("en-zh/train_mini.tsv"));
  if (!in) throw std::runtime_error("cannot read en-zh/train_mini.tsv");
  fs::create_directories(dir);
  const std::string path = (fs::path(dir) / "pairs.tsv").string();
  std::ofstream out(path);
  std::string line;
  for (int i = 0; i < pairs && std::getline(in, line); ++i) out << line << "\n";
  return path;
}

std::string TrainTinyModel(const std::string& parent_dir, int pairs) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, int>, std::string> trained;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = trained.find({parent_dir, pairs});
  if (found != trained.end()) return found->second;

  const fs::path directory = fs::path(parent_dir) / "tiny_model";
  const std::string checkpoint = TrainTinyModelOn(
      WriteTinyPairs(directory.string(), pairs), (directory / "run").string());
  trained[{parent_dir, pairs}] = checkpoint;
  return checkpoint;
}

std::string TrainTinyReverseModel(const std::string& parent_dir) {
  const std::string pairs =
      (fs::path(parent_dir) / "tiny_model" / "pairs.tsv").string();
  TrainTinyModel(parent_dir, 30);  // Writes the pairs, if not yet done.
  return TrainTinyModelOn(pairs, parent_dir + "/zh_en",
                          [](TrainingOptions& options) {
                            options.corpus.columns = TsvColumns{1, 0};
                            options.corpus.source_language = "zh";
                            options.corpus.target_language = "en";
                          });
}

void AddModelVersion(const std::string& repository, const std::string& name,
                     int version, const std::string& from) {
  const fs::path folder = fs::path(repository) / name;
  fs::create_directories(folder);
  const fs::path staging = folder / (std::to_string(version) + ".tmp");
  fs::copy(from, staging, fs::copy_options::recursive);
  fs::rename(staging, folder / std::to_string(version));
}

std::string CopyFindingEverythingTooLong(const std::string& from) {
  const std::string copy = MakeTempDir("too_long") + "/model";
  fs::copy(from, copy, fs::copy_options::recursive);
  const std::string config_path = copy + "/config.json";
  nlohmann::json config = nlohmann::json::parse(std::ifstream(config_path));
  config["target_length_ratio"] = {0.01, 0.02};
  std::ofstream(config_path) << config.dump(2);
  return copy;
}

std::vector<std::string> TestDevices() {
  std::vector<std::string> devices = {"cpu"};
  if (torch::cuda::is_available()) devices.push_back("cuda");
  return devices;
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

}  // namespace fanyi::testing_util
