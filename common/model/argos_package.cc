#include "common/model/argos_package.h"

#include <stdlib.h>
#include <zip.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/model/ctranslate2_directory.h"
#include "common/model/ctranslate2_import.h"
#include "common/model/small_file.h"
#include "common/text/subword_model.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxMetadataBytes = 1 << 20;

// What metadata.json says of the package.
struct Metadata {
  std::string from_code;
  std::string to_code;
  std::string package_version;
  // The target language's token of a multilingual model ("__de__"), that
  // every translation starts with; empty for none.
  std::string target_prefix;
};

std::string StringField(const nlohmann::json& object, const char* key,
                        const fs::path& file, bool required) {
  const auto found = object.find(key);
  if (found == object.end() || found->is_null()) {
    if (required) throw std::runtime_error(file.string() + " has no " + key);
    return "";
  }
  if (!found->is_string()) {
    throw std::runtime_error(file.string() + ": " + key + " is not a string");
  }
  return found->get<std::string>();
}

Metadata ReadMetadata(const fs::path& file) {
  nlohmann::json json;
  try {
    json =
        nlohmann::json::parse(ReadSmallFile(file.string(), kMaxMetadataBytes));
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(file.string() + " is not JSON: " + error.what());
  }
  if (!json.is_object()) {
    throw std::runtime_error(file.string() + " is not a JSON object");
  }
  const std::string type = StringField(json, "type", file, false);
  if (!type.empty() && type != "translate") {
    throw std::runtime_error(file.string() + ": a package of type \"" + type +
                             "\", not a translation model");
  }
  Metadata metadata{StringField(json, "from_code", file, true),
                    StringField(json, "to_code", file, true),
                    StringField(json, "package_version", file, false),
                    StringField(json, "target_prefix", file, false)};
  for (const std::string* code : {&metadata.from_code, &metadata.to_code}) {
    const bool plain = !code->empty() && code->size() <= 16 &&
                       std::all_of(code->begin(), code->end(), [](char c) {
                         return (c >= 'a' && c <= 'z') ||
                                (c >= 'A' && c <= 'Z') ||
                                (c >= '0' && c <= '9') || c == '-' || c == '_';
                       });
    if (!plain) {
      throw std::runtime_error(file.string() +
                               ": from_code and to_code must be language "
                               "codes (letters, digits, - and _; at most "
                               "16)");
    }
  }
  return metadata;
}

// A temporary directory, removed with all it holds when this goes.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern =
        (fs::temp_directory_path() / "fanyi-argos-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot make a temporary directory in " +
                               fs::temp_directory_path().string());
    }
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Whether `name` (an entry's path inside the zip, '/'-separated) is a
// relative path without "." or ".." parts or backslashes, short enough for
// any file system (parts of at most 255 bytes, 1,024 in all).
bool IsPlainRelativePath(std::string_view name) {
  if (name.empty() || name.size() > 1024 || name.front() == '/' ||
      name.find('\\') != std::string_view::npos) {
    return false;
  }
  size_t start = 0;
  while (start < name.size()) {
    const size_t end = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, end - start);
    if (part == "." || part == ".." || part.size() > 255 ||
        (part.empty() && end < name.size())) {
      return false;
    }
    start = end + 1;
  }
  return true;
}

// Whether an entry below the package's folder is one ImportArgosPackage
// reads: metadata.json, sentencepiece.model, bpe.model (to name it), or a
// file directly in model/.
bool IsNeeded(std::string_view inner) {
  if (inner == "metadata.json" || inner == "sentencepiece.model" ||
      inner == "bpe.model") {
    return true;
  }
  constexpr std::string_view kModel = "model/";
  return inner.substr(0, kModel.size()) == kModel &&
         inner.size() > kModel.size() &&
         inner.find('/', kModel.size()) == std::string_view::npos;
}

// Unpacks what the import reads of the .argosmodel `file` into `into`;
// returns the package's folder there.
fs::path Unpack(const std::string& file, const fs::path& into) {
  int code = 0;
  std::unique_ptr<zip_t, void (*)(zip_t*)> archive(
      zip_open(file.c_str(), ZIP_RDONLY, &code), zip_discard);
  if (archive == nullptr) {
    zip_error_t error;
    zip_error_init_with_code(&error, code);
    const std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw std::runtime_error(file +
                             " is not an .argosmodel (zip) file: " + message);
  }
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  if (entries < 0 || entries > kMaxArgosEntries) {
    throw std::runtime_error(file + " has more than " +
                             std::to_string(kMaxArgosEntries) + " entries");
  }
  std::string root;  // The one folder every entry is in.
  long long total = 0;
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive.get(), i, 0, &stat) != 0 ||
        (stat.valid & ZIP_STAT_NAME) == 0 ||
        (stat.valid & ZIP_STAT_SIZE) == 0) {
      throw std::runtime_error(file + ": entry " + std::to_string(i) +
                               " cannot be read");
    }
    const std::string name = stat.name;
    const size_t slash = name.find('/');
    if (!IsPlainRelativePath(name) || slash == std::string::npos ||
        (!root.empty() && name.compare(0, slash, root) != 0) ||
        (!root.empty() && slash != root.size())) {
      throw std::runtime_error(file + ": entry \"" + name +
                               "\" is not inside the package's one folder");
    }
    root = name.substr(0, slash);
    const std::string inner = name.substr(slash + 1);
    if (!IsNeeded(inner)) continue;
    if (stat.size > static_cast<zip_uint64_t>(kMaxArgosBytes - total)) {
      throw std::runtime_error(file + " holds more than " +
                               std::to_string(kMaxArgosBytes) +
                               " bytes uncompressed");
    }
    total += static_cast<long long>(stat.size);
    const fs::path target = into / root / inner;
    fs::create_directories(target.parent_path());
    std::unique_ptr<zip_file_t, int (*)(zip_file_t*)> entry(
        zip_fopen_index(archive.get(), i, 0), zip_fclose);
    std::ofstream out(target, std::ios::binary);
    if (entry == nullptr || !out) {
      throw std::runtime_error(file + ": " + name + " cannot be unpacked");
    }
    std::string buffer(1 << 20, '\0');
    zip_uint64_t written = 0;
    while (true) {
      const zip_int64_t got =
          zip_fread(entry.get(), buffer.data(), buffer.size());
      if (got < 0) {
        throw std::runtime_error(file + ": " + name + " is corrupt");
      }
      if (got == 0) break;
      written += static_cast<zip_uint64_t>(got);
      if (written > stat.size) {
        throw std::runtime_error(file + ": " + name +
                                 " is longer than its header says");
      }
      out.write(buffer.data(), got);
    }
    out.close();
    if (written != stat.size || !out) {
      throw std::runtime_error(file + ": " + name + " cannot be unpacked");
    }
  }
  if (root.empty()) throw std::runtime_error(file + " is empty");
  return into / root;
}

// The package in directory `root`, named `name`.
Checkpoint ImportDirectory(const fs::path& root, const std::string& name) {
  if (!fs::exists(root / "sentencepiece.model")) {
    if (fs::exists(root / "bpe.model")) {
      throw std::runtime_error(
          (root / "bpe.model").string() +
          ": the package tokenizes with Moses and subword-nmt, which fanyi "
          "does not; it serves SentencePiece packages");
    }
    throw std::runtime_error(root.string() + " has no sentencepiece.model");
  }
  if (!fs::exists(root / "metadata.json")) {
    throw std::runtime_error(root.string() + " has no metadata.json");
  }
  const Metadata metadata = ReadMetadata(root / "metadata.json");
  const std::shared_ptr<const SubwordModel> subwords =
      ReadSubwordModelFile((root / "sentencepiece.model").string());
  const fs::path model = root / "model";
  if (!IsCt2ModelDirectory(model.string())) {
    throw std::runtime_error(model.string() +
                             " is not a CTranslate2 model directory (no "
                             "model.bin)");
  }
  Checkpoint checkpoint =
      ImportCt2Model(ReadCt2Directory(model.string()), model.string());
  checkpoint.source_subwords = subwords;
  checkpoint.target_subwords = subwords;
  if (!metadata.target_prefix.empty()) {
    const int64_t id = checkpoint.target_vocabulary.Id(metadata.target_prefix);
    if (checkpoint.target_vocabulary.Token(id) != metadata.target_prefix) {
      throw std::runtime_error((root / "metadata.json").string() +
                               ": target_prefix \"" + metadata.target_prefix +
                               "\" is not in the model's vocabulary");
    }
    checkpoint.target_prefix = {metadata.target_prefix};
  }
  // argos-translate's translate_batch call: beam 4, length_penalty 0.2.
  checkpoint.length_penalty = 0.2;
  checkpoint.source_language = LibreTranslateLanguageCode(metadata.from_code);
  checkpoint.target_language = LibreTranslateLanguageCode(metadata.to_code);
  // metadata.json's codes are plain ASCII (ReadMetadata).
  checkpoint.model_version =
      Utf8OrElse(name, "argos-" + metadata.from_code + "-" + metadata.to_code);
  checkpoint.training = {{"imported_from",
                          {{"format", "argos"},
                           {"package", checkpoint.model_version},
                           {"from_code", metadata.from_code},
                           {"to_code", metadata.to_code},
                           {"package_version", metadata.package_version}}}};
  return checkpoint;
}

// `message` with the temporary folder `from` named as `to`.
std::string Renamed(std::string message, const std::string& from,
                    const std::string& to) {
  for (size_t at = message.find(from); at != std::string::npos;
       at = message.find(from, at + to.size())) {
    message.replace(at, from.size(), to);
  }
  return message;
}

}  // namespace

bool IsArgosPackage(const std::string& path) {
  std::error_code error;
  const fs::path package(path);
  if (fs::is_regular_file(package, error)) {
    return package.extension() == ".argosmodel";
  }
  return fs::is_regular_file(package / "metadata.json", error) &&
         fs::is_directory(package / "model", error);
}

std::string LibreTranslateLanguageCode(const std::string& argos_code) {
  if (argos_code == "zt") return "zh-Hant";
  if (argos_code == "pb") return "pt-BR";
  return argos_code;
}

Checkpoint ImportArgosPackage(const std::string& path) {
  const fs::path package = fs::path(path).lexically_normal();
  std::error_code error;
  // Every failure a std::runtime_error, as LoadCheckpoint's are.
  if (fs::is_regular_file(package, error)) {
    TemporaryDirectory unpacked;
    fs::path root;
    try {
      root = Unpack(path, unpacked.path());
      return ImportDirectory(root, package.stem().string());
    } catch (const std::exception& failure) {
      // Errors name the file inside the package, not the temporary copy.
      std::string message = failure.what();
      if (!root.empty()) message = Renamed(message, root.string(), path + "!");
      throw std::runtime_error(
          Renamed(message, unpacked.path().string(), path + "!"));
    }
  }
  const std::string name =
      (package.filename().empty() ? package.parent_path().filename()
                                  : package.filename())
          .string();
  try {
    return ImportDirectory(package, name);
  } catch (const std::runtime_error&) {
    throw;
  } catch (const std::exception& failure) {
    throw std::runtime_error(path + ": " + failure.what());
  }
}

}  // namespace fanyi
