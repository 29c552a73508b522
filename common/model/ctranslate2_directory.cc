#include "common/model/ctranslate2_directory.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "common/model/small_file.h"

namespace fanyi {
namespace {

constexpr int64_t kMaxVocabularyBytes = int64_t{64} << 20;
constexpr int64_t kMaxVocabularyTokens = int64_t{1} << 22;

// A JSON vocabulary, parsed without building a document: one array of
// strings, no deeper nesting, at most kMaxVocabularyTokens entries.
class VocabularyJson : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::vector<std::string> tokens;
  std::string error;

  bool string(string_t& value) override {
    if (depth_ != 1) return Refuse("a string outside the array");
    if (tokens.size() == size_t(kMaxVocabularyTokens)) {
      return Refuse("over " + std::to_string(kMaxVocabularyTokens) + " tokens");
    }
    tokens.push_back(std::move(value));
    return true;
  }
  bool start_array(std::size_t) override {
    if (depth_ != 0 || started_) return Refuse("not one array of strings");
    started_ = true;
    ++depth_;
    return true;
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool null() override { return NotAString(); }
  bool boolean(bool) override { return NotAString(); }
  bool number_integer(number_integer_t) override { return NotAString(); }
  bool number_unsigned(number_unsigned_t) override { return NotAString(); }
  bool number_float(number_float_t, const string_t&) override {
    return NotAString();
  }
  bool binary(binary_t&) override { return NotAString(); }
  bool start_object(std::size_t) override { return NotAString(); }
  bool key(string_t&) override { return NotAString(); }
  bool end_object() override { return NotAString(); }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& exception) override {
    return Refuse("not JSON at byte " + std::to_string(position) + ": " +
                  exception.what());
  }

 private:
  bool NotAString() {
    return Refuse(depth_ == 0 ? "not an array"
                              : "entry " + std::to_string(tokens.size()) +
                                    " is not a string");
  }
  bool Refuse(const std::string& what) {
    if (error.empty()) error = what;
    return false;
  }

  int depth_ = 0;
  bool started_ = false;
};

bool IsFile(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode);
}

// `dir`/`stem`.json or .txt, whichever is there; "" for neither.
std::string VocabularyFile(const std::string& dir, const std::string& stem) {
  for (const char* extension : {".json", ".txt"}) {
    const std::string path = dir + "/" + stem + extension;
    if (IsFile(path)) return path;
  }
  return "";
}

}  // namespace

std::vector<std::string> ReadCt2Vocabulary(const std::string& path) {
  const std::string bytes = ReadSmallFile(path, kMaxVocabularyBytes);
  std::vector<std::string> tokens;
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0) {
    VocabularyJson json;
    if (!nlohmann::json::sax_parse(bytes, &json) || !json.error.empty()) {
      throw std::runtime_error(path + ": " +
                               (json.error.empty() ? "not JSON" : json.error));
    }
    tokens = std::move(json.tokens);
  } else {
    for (size_t start = 0; start < bytes.size();) {
      if (tokens.size() == size_t(kMaxVocabularyTokens)) {
        throw std::runtime_error(path + ": over " +
                                 std::to_string(kMaxVocabularyTokens) +
                                 " tokens");
      }
      size_t end = bytes.find('\n', start);
      if (end == std::string::npos) end = bytes.size();
      tokens.push_back(bytes.substr(start, end - start));
      start = end + 1;
    }
  }
  if (tokens.empty()) throw std::runtime_error(path + ": no tokens");
  return tokens;
}

Ct2Vocabularies ReadCt2Vocabularies(const std::string& model_dir) {
  Ct2Vocabularies vocabularies;
  if (!VocabularyFile(model_dir, "source_1_vocabulary").empty()) {
    throw std::runtime_error(model_dir +
                             ": source_1_vocabulary: several source embeddings "
                             "(source features) are not served");
  }
  if (const std::string shared = VocabularyFile(model_dir, "shared_vocabulary");
      !shared.empty()) {
    vocabularies.source = ReadCt2Vocabulary(shared);
    vocabularies.target = vocabularies.source;
    vocabularies.shared = true;
    return vocabularies;
  }
  const std::string source = VocabularyFile(model_dir, "source_vocabulary");
  const std::string target = VocabularyFile(model_dir, "target_vocabulary");
  if (source.empty() || target.empty()) {
    throw std::runtime_error(
        model_dir +
        ": no vocabularies (shared_vocabulary.json or .txt, or "
        "source_vocabulary and target_vocabulary)");
  }
  vocabularies.source = ReadCt2Vocabulary(source);
  vocabularies.target = ReadCt2Vocabulary(target);
  return vocabularies;
}

namespace {

// The id of `token` in `vocabulary` (the first, as CTranslate2 takes it);
// throws naming the file, the setting and the token when it is not there.
int64_t TokenId(const std::vector<std::string>& vocabulary,
                const std::string& token, const std::string& setting,
                const std::string& vocabulary_name) {
  for (size_t id = 0; id < vocabulary.size(); ++id) {
    if (vocabulary[id] == token) return static_cast<int64_t>(id);
  }
  throw std::runtime_error(vocabulary_name + ": has no \"" + token +
                           "\", which config.json names as " + setting);
}

}  // namespace

Ct2Directory ReadCt2Directory(const std::string& model_dir) {
  const std::string config_path = model_dir + "/config.json";
  const std::string config =
      IsFile(config_path) ? ReadSmallFile(config_path, kMaxCt2ConfigBytes) : "";
  Ct2ModelFile model = Ct2ModelFile::Open(model_dir + "/model.bin");
  Ct2TransformerOptions options =
      ReadCt2TransformerOptions(model, config, config_path);
  Ct2Vocabularies vocabularies = ReadCt2Vocabularies(model_dir);
  const std::string source_name =
      model_dir +
      (vocabularies.shared ? "/shared_vocabulary" : "/source_vocabulary");
  const std::string target_name =
      model_dir +
      (vocabularies.shared ? "/shared_vocabulary" : "/target_vocabulary");
  for (const auto& [tokens, rows, name, side] :
       {std::tuple{&vocabularies.source, options.source_vocabulary_size,
                   source_name, "encoder"},
        std::tuple{&vocabularies.target, options.target_vocabulary_size,
                   target_name, "decoder"}}) {
    if (static_cast<int64_t>(tokens->size()) != rows) {
      throw std::runtime_error(name + ": " + std::to_string(tokens->size()) +
                               " tokens for the " + std::to_string(rows) +
                               " rows of model.bin's " + side + " embeddings");
    }
  }
  Ct2Directory directory{std::move(model), std::move(options),
                         std::move(vocabularies)};
  const Ct2TransformerOptions& o = directory.options;
  const Ct2Vocabularies& v = directory.vocabularies;
  directory.source_unk_id =
      TokenId(v.source, o.unk_token, "unk_token", source_name);
  if (o.add_source_bos) {
    directory.source_bos_id =
        TokenId(v.source, o.bos_token, "bos_token", source_name);
  }
  if (o.add_source_eos) {
    directory.source_eos_id =
        TokenId(v.source, o.eos_token, "eos_token", source_name);
  }
  directory.target_unk_id =
      TokenId(v.target, o.unk_token, "unk_token", target_name);
  directory.target_eos_id =
      TokenId(v.target, o.eos_token, "eos_token", target_name);
  if (o.decoder_start_token) {
    directory.decoder_start_id = TokenId(v.target, *o.decoder_start_token,
                                         "decoder_start_token", target_name);
  }
  return directory;
}

}  // namespace fanyi
