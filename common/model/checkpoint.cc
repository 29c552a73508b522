#include "common/model/checkpoint.h"

#include <fcntl.h>
#include <stdio.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "common/model/argos_package.h"
#include "common/model/checkpoint_config.h"
#include "common/model/ctranslate2_import.h"
#include "common/model/small_file.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

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
  nlohmann::json config = CheckpointConfigJson(checkpoint);
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
  nlohmann::json config = ReadCheckpointConfig(config_path);
  Checkpoint checkpoint = CheckpointFromConfig(config, config_path);

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
