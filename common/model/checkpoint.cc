#include "common/model/checkpoint.h"

#include <fcntl.h>
#include <stdio.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/model/argos_package.h"
#include "common/model/ctranslate2_import.h"
#include "common/model/small_file.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

constexpr char kFormatName[] = "fanyi-checkpoint";
// Tokens a source or target prefix may hold (a language token is one).
constexpr std::size_t kMaxPrefixTokens = 16;

// config.json's `name` ("source_prefix", "target_prefix"): a list of at most
// kMaxPrefixTokens tokens of 1 to 256 bytes; none when absent. Throws
// std::invalid_argument otherwise.
std::vector<std::string> ReadPrefix(const nlohmann::json& config,
                                    const std::string& name) {
  std::vector<std::string> tokens;
  if (!config.contains(name)) return tokens;
  const nlohmann::json& prefix = config[name];
  if (!prefix.is_array() || prefix.size() > kMaxPrefixTokens) {
    throw std::invalid_argument(name + " must be a list of at most " +
                                std::to_string(kMaxPrefixTokens) + " tokens");
  }
  for (const nlohmann::json& token : prefix) {
    if (!token.is_string() || token.get_ref<const std::string&>().empty() ||
        token.get_ref<const std::string&>().size() > 256) {
      throw std::invalid_argument(name + " must hold tokens of 1 to 256 bytes");
    }
    tokens.push_back(token.get<std::string>());
  }
  return tokens;
}

std::string ShapeString(const at::IntArrayRef& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return text + "]";
}

void WriteJson(const nlohmann::json& json, const fs::path& path) {
  std::string text;
  try {
    text = json.dump(2);
  } catch (const nlohmann::json::type_error& error) {
    throw std::runtime_error("cannot write " + path.string() +
                             ": a field is not valid UTF-8 (" + error.what() +
                             ")");
  }
  std::ofstream out(path);
  out << text << "\n";
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

nlohmann::json ReadConfig(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  nlohmann::json config;
  try {
    config = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(path.string() +
                             ": not valid JSON: " + error.what());
  }
  // Types are checked before values are read: json::value() throws
  // type_error on a mistyped field, and reading 1e300 as an int is undefined.
  if (!config.is_object() || !config.contains("format") ||
      config.at("format") != kFormatName) {
    throw std::runtime_error(path.string() +
                             ": not a fanyi checkpoint config "
                             "(\"format\" must be \"" +
                             kFormatName + "\")");
  }
  const auto version = config.find("format_version");
  if (version == config.end() || !version->is_number_integer()) {
    throw std::runtime_error(path.string() +
                             ": \"format_version\" is missing or not an "
                             "integer");
  }
  if (*version < kOldestCheckpointFormatVersion ||
      *version > kCheckpointFormatVersion) {
    throw std::runtime_error(path.string() + ": format_version " +
                             version->dump() + " is not supported (expected " +
                             std::to_string(kOldestCheckpointFormatVersion) +
                             " to " + std::to_string(kCheckpointFormatVersion) +
                             ")");
  }
  for (const char* field :
       {"model_version", "source_language", "target_language"}) {
    if (!config.contains(field) || !config[field].is_string()) {
      throw std::runtime_error(path.string() + ": missing string field '" +
                               field + "'");
    }
  }
  return config;
}

// Copies every tensor of `archive` into `module` (and, recursively, its
// children, which torch::save stores as nested archives) after checking its
// shape, so a checkpoint of another architecture is refused instead of
// silently reshaping the model.
void LoadModuleWeights(torch::nn::Module& module,
                       torch::serialize::InputArchive& archive,
                       const std::string& prefix, const fs::path& path) {
  auto load = [&](const std::string& name, torch::Tensor& target) {
    torch::Tensor stored;
    if (!archive.try_read(name, stored)) {
      throw std::runtime_error(path.string() + ": missing tensor '" + prefix +
                               name + "'");
    }
    if (stored.sizes() != target.sizes()) {
      throw std::runtime_error(path.string() + ": tensor '" + prefix + name +
                               "' has shape " + ShapeString(stored.sizes()) +
                               ", the model expects " +
                               ShapeString(target.sizes()));
    }
    target.copy_(stored);
  };
  for (auto& parameter : module.named_parameters(/*recurse=*/false)) {
    load(parameter.key(), parameter.value());
  }
  for (auto& buffer : module.named_buffers(/*recurse=*/false)) {
    load(buffer.key(), buffer.value());
  }
  for (auto& child : module.named_children()) {
    torch::serialize::InputArchive child_archive;
    if (!archive.try_read(child.key(), child_archive)) {
      throw std::runtime_error(path.string() + ": missing module '" + prefix +
                               child.key() + "'");
    }
    LoadModuleWeights(*child.value(), child_archive, prefix + child.key() + ".",
                      path);
  }
}

void LoadWeights(TransformerImpl& model, const fs::path& path) {
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path.string());
  } catch (const c10::Error& error) {
    throw std::runtime_error(path.string() +
                             ": cannot read weights (truncated or corrupt "
                             "file?): " +
                             error.what_without_backtrace());
  }
  torch::NoGradGuard no_grad;
  LoadModuleWeights(model, archive, "", path);
}

// Flushes `path` (a file or a directory) to the disk, so that a crash of
// the machine right after the rename below cannot leave a checkpoint
// directory of empty or partial files.
void SyncToDisk(const fs::path& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fsync(fd) != 0) {
    const std::string error = std::strerror(errno);
    if (fd >= 0) close(fd);
    throw std::runtime_error("cannot flush " + path.string() +
                             " to disk: " + error);
  }
  close(fd);
}

// Flushes every file in `directory`, then the directory itself.
void SyncDirectoryToDisk(const fs::path& directory) {
  for (const fs::directory_entry& entry :
       fs::recursive_directory_iterator(directory)) {
    if (entry.is_regular_file() || entry.is_directory()) {
      SyncToDisk(entry.path());
    }
  }
  SyncToDisk(directory);
}

// Puts the complete directory `staging` in the place of `target` so that at
// every moment `target` is either the old or the new directory, whole: a
// process killed at any point never leaves it missing or half-written.
// Renaming the old one aside first would leave a moment with no `target`.
void ReplaceDirectory(const fs::path& staging, const fs::path& target) {
  const fs::path previous = target.string() + ".old";
  if (!fs::exists(target)) {
    fs::rename(staging, target);
  } else if (renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target.c_str(),
                       RENAME_EXCHANGE) == 0) {
    // Swapped atomically (Linux 3.15+): the old directory is now `staging`.
    fs::remove_all(staging);
  } else if (errno == EINVAL || errno == ENOSYS) {
    // A file system without the swap: the old directory goes aside for a
    // moment, the one moment without `target`.
    fs::remove_all(previous);
    fs::rename(target, previous);
    fs::rename(staging, target);
  } else {
    throw std::runtime_error("cannot move " + staging.string() + " to " +
                             target.string() + ": " + std::strerror(errno));
  }
  fs::remove_all(previous);
}

// Each side's subword model: its config.json field and its file.
struct SubwordFile {
  const char* field;
  const char* file;
};
constexpr SubwordFile kSubwordFiles[2] = {
    {"source_subwords", "src_subwords.model"},
    {"target_subwords", "tgt_subwords.model"}};

// The subword model of side `side` (0 source, 1 target).
template <typename CheckpointType>
auto& SubwordsOf(CheckpointType& checkpoint, int side) {
  return side == 0 ? checkpoint.source_subwords : checkpoint.target_subwords;
}

// Writes every file of `checkpoint` into `staging`.
void WriteCheckpointFiles(
    const Checkpoint& checkpoint, const fs::path& staging,
    const std::function<void(const std::string&)>& write_extra) {
  nlohmann::json config = {
      {"format", kFormatName},
      {"format_version", kCheckpointFormatVersion},
      {"model_version", checkpoint.model_version},
      {"source_language", checkpoint.source_language},
      {"target_language", checkpoint.target_language},
      {"source_script", checkpoint.source_script},
      {"target_script", checkpoint.target_script},
      {"source_case", WordCaseName(checkpoint.source_case)},
      {"target_case", WordCaseName(checkpoint.target_case)},
      {"longest_source_tokens", checkpoint.longest_source_tokens},
      {"length_penalty", checkpoint.length_penalty},
      {"length_normalization",
       checkpoint.length_normalization == LengthNormalization::kCtranslate2
           ? "ctranslate2"
           : "gnmt"},
      {"model", ModelConfigToJson(checkpoint.model->config())},
      {"training", checkpoint.training},
  };
  if (!checkpoint.source_prefix.empty()) {
    config["source_prefix"] = checkpoint.source_prefix;
  }
  if (!checkpoint.target_prefix.empty()) {
    config["target_prefix"] = checkpoint.target_prefix;
  }
  if (checkpoint.target_ratio_high > 0) {
    config["target_length_ratio"] = {checkpoint.target_ratio_low,
                                     checkpoint.target_ratio_high};
  }
  for (int side = 0; side < 2; ++side) {
    const auto& [field, file] = kSubwordFiles[side];
    const auto& model = SubwordsOf(checkpoint, side);
    if (!model) continue;
    config[field] = file;
    std::ofstream out(staging / file, std::ios::binary);
    out << model->serialized();
    out.close();
    if (!out) {
      throw std::runtime_error("cannot write " + (staging / file).string());
    }
  }
  WriteJson(config, staging / "config.json");
  checkpoint.source_vocabulary.Save((staging / "src_vocab.json").string());
  checkpoint.target_vocabulary.Save((staging / "tgt_vocab.json").string());
  torch::serialize::OutputArchive archive;
  checkpoint.model->save(archive);
  archive.save_to((staging / "model.pt").string());
  if (write_extra) write_extra(staging.string());
}

}  // namespace

void SaveCheckpoint(
    const Checkpoint& checkpoint, const std::string& directory,
    const std::function<void(const std::string&)>& write_extra) {
  fs::path target = fs::path(directory).lexically_normal();
  // "dir/" names "dir", whose staging sibling is "dir.tmp".
  if (!target.has_filename()) target = target.parent_path();
  const fs::path staging = target.string() + ".tmp";
  fs::remove_all(staging);
  fs::create_directories(staging);
  try {
    WriteCheckpointFiles(checkpoint, staging, write_extra);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  // The files reach the disk before the rename makes them the checkpoint,
  // and the rename itself reaches it after (the parent directory's entry).
  SyncDirectoryToDisk(staging);
  ReplaceDirectory(staging, target);
  SyncToDisk(target.has_parent_path() ? target.parent_path() : fs::path("."));
}

std::string ResolveCheckpointDirectory(const std::string& path) {
  const fs::path directory(path);
  if (!fs::exists(directory / "config.json") &&
      fs::exists(directory / "best" / "config.json")) {
    return (directory / "best").string();
  }
  return path;
}

Checkpoint LoadCheckpoint(const std::string& path,
                          const torch::Device& device) {
  if (IsArgosPackage(path)) {
    Checkpoint imported = ImportArgosPackage(path);
    imported.model->to(device);
    imported.model->eval();
    return imported;
  }
  const fs::path directory(ResolveCheckpointDirectory(path));
  if (!fs::is_directory(directory)) {
    throw std::runtime_error("checkpoint directory " + directory.string() +
                             " does not exist");
  }
  if (IsCt2ModelDirectory(directory.string())) {
    Checkpoint imported = ImportCt2Directory(directory.string());
    imported.model->to(device);
    imported.model->eval();
    return imported;
  }
  const fs::path config_path = directory / "config.json";
  nlohmann::json config = ReadConfig(config_path);

  Checkpoint checkpoint;
  checkpoint.model_version = config["model_version"].get<std::string>();
  checkpoint.source_language = config["source_language"].get<std::string>();
  checkpoint.target_language = config["target_language"].get<std::string>();
  checkpoint.training = config.value("training", nlohmann::json::object());
  // Optional: checkpoints written before them load as before.
  try {
    checkpoint.source_script = config.value("source_script", std::string());
    checkpoint.target_script = config.value("target_script", std::string());
    if (!checkpoint.source_script.empty() &&
        checkpoint.source_script != "simplified") {
      throw std::invalid_argument("unknown source_script \"" +
                                  checkpoint.source_script + "\"");
    }
    checkpoint.longest_source_tokens =
        config.value("longest_source_tokens", int64_t{0});
    if (config.contains("target_length_ratio")) {
      const nlohmann::json& ratio = config["target_length_ratio"];
      if (!ratio.is_array() || ratio.size() != 2 || !ratio[0].is_number() ||
          !ratio[1].is_number() || !(ratio[0].get<double>() >= 0) ||
          !(ratio[1].get<double>() >= ratio[0].get<double>()) ||
          !(ratio[1].get<double>() > 0) ||
          !std::isfinite(ratio[1].get<double>())) {
        throw std::invalid_argument(
            "target_length_ratio must be [low, high] with 0 <= low <= high "
            "and 0 < high");
      }
      checkpoint.target_ratio_low = ratio[0].get<double>();
      checkpoint.target_ratio_high = ratio[1].get<double>();
    }
    if (config.contains("length_penalty")) {
      if (!config["length_penalty"].is_number()) {
        throw std::invalid_argument("length_penalty must be a number");
      }
      checkpoint.length_penalty = config["length_penalty"].get<double>();
      if (!(checkpoint.length_penalty >= 0)) {
        throw std::invalid_argument("length_penalty must not be negative");
      }
    }
    const std::string normalization =
        config.value("length_normalization", std::string("gnmt"));
    if (normalization != "gnmt" && normalization != "ctranslate2") {
      throw std::invalid_argument(
          "length_normalization must be gnmt or "
          "ctranslate2, not \"" +
          normalization + "\"");
    }
    checkpoint.length_normalization = normalization == "ctranslate2"
                                          ? LengthNormalization::kCtranslate2
                                          : LengthNormalization::kGnmt;
    checkpoint.source_prefix = ReadPrefix(config, "source_prefix");
    checkpoint.target_prefix = ReadPrefix(config, "target_prefix");
    checkpoint.source_case =
        ParseWordCase(config.value("source_case", std::string("lower")));
    checkpoint.target_case =
        ParseWordCase(config.value("target_case", std::string("lower")));
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(config_path.string() + ": " + error.what());
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error(config_path.string() + ": " + error.what());
  }
  ModelConfig model_config;
  try {
    model_config = ModelConfigFromJson(config.at("model"));
  } catch (const std::exception& error) {
    throw std::runtime_error(config_path.string() + ": " + error.what());
  }

  for (int side = 0; side < 2; ++side) {
    const char* field = kSubwordFiles[side].field;
    if (!config.contains(field)) continue;
    if (!config[field].is_string()) {
      throw std::runtime_error(config_path.string() + ": \"" + field +
                               "\" must be a file name");
    }
    // A file in the checkpoint directory, not a path elsewhere.
    const fs::path file = fs::path(config[field].get<std::string>()).filename();
    SubwordsOf(checkpoint, side) =
        ReadSubwordModelFile((directory / file).string());
  }
  checkpoint.source_vocabulary =
      Vocabulary::Load((directory / "src_vocab.json").string());
  checkpoint.target_vocabulary =
      Vocabulary::Load((directory / "tgt_vocab.json").string());
  auto check_size = [&](const Vocabulary& vocabulary, int64_t expected,
                        const char* file) {
    if (vocabulary.size() != expected) {
      throw std::runtime_error((directory / file).string() + ": holds " +
                               std::to_string(vocabulary.size()) +
                               " tokens but " + config_path.string() +
                               " says the model has " +
                               std::to_string(expected));
    }
  };
  check_size(checkpoint.source_vocabulary, model_config.source_vocab_size,
             "src_vocab.json");
  check_size(checkpoint.target_vocabulary, model_config.target_vocab_size,
             "tgt_vocab.json");
  for (const auto& [prefix, vocabulary, name, file] :
       {std::tuple{&checkpoint.source_prefix, &checkpoint.source_vocabulary,
                   "source_prefix", "src_vocab.json"},
        std::tuple{&checkpoint.target_prefix, &checkpoint.target_vocabulary,
                   "target_prefix", "tgt_vocab.json"}}) {
    for (const std::string& token : *prefix) {
      const int64_t id = vocabulary->Id(token);
      if (vocabulary->Token(id) != token || id <= Vocabulary::kEosId) {
        throw std::runtime_error(config_path.string() + ": " + name + " \"" +
                                 token + "\" is not an ordinary token of " +
                                 file);
      }
    }
  }

  checkpoint.model = Transformer(model_config);
  const fs::path weights_path = directory / "model.pt";
  if (!fs::exists(weights_path)) {
    throw std::runtime_error(weights_path.string() + ": file not found");
  }
  LoadWeights(*checkpoint.model, weights_path);
  checkpoint.model->to(device);
  checkpoint.model->eval();
  return checkpoint;
}

}  // namespace fanyi
