#include "common/text/vocabulary.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fanyi {
namespace {

constexpr const char* kFormatName = "fanyi-vocabulary";

const std::vector<std::string>& SpecialTokens() {
  static const std::vector<std::string> specials = {
      Vocabulary::kPadToken, Vocabulary::kUnkToken, Vocabulary::kBosToken,
      Vocabulary::kEosToken};
  return specials;
}

constexpr const char* kModelNamesSpecials = "model";

// Checks the token list and returns an empty string or what is wrong.
std::string FindTokenListProblem(const std::vector<std::string>& tokens,
                                 Vocabulary::SpecialNames special_names) {
  const std::vector<std::string>& specials = SpecialTokens();
  if (tokens.size() < specials.size()) {
    return "has " + std::to_string(tokens.size()) +
           " tokens but needs at least the " + std::to_string(specials.size()) +
           " special tokens";
  }
  for (std::size_t id = 0; id < specials.size() &&
                           special_names == Vocabulary::SpecialNames::kFanyi;
       ++id) {
    if (tokens[id] != specials[id]) {
      return "entry " + std::to_string(id) + " is \"" + tokens[id] +
             "\" but the special token \"" + specials[id] + "\" must have id " +
             std::to_string(id);
    }
  }
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty()) {
      return "entry " + std::to_string(id) + " is an empty string";
    }
    const auto [it, inserted] = seen.emplace(tokens[id], id);
    if (!inserted) {
      return "entry " + std::to_string(id) + " duplicates token \"" +
             tokens[id] + "\" (entry " + std::to_string(it->second) + ")";
    }
  }
  return "";
}

std::string LoadError(const std::string& path, const std::string& problem) {
  return "vocabulary file " + path + ": " + problem;
}

}  // namespace

Vocabulary::Vocabulary(std::vector<std::string> tokens,
                       SpecialNames special_names)
    : tokens_(std::move(tokens)), special_names_(special_names) {
  const std::string problem = FindTokenListProblem(tokens_, special_names_);
  if (!problem.empty()) {
    throw std::invalid_argument("vocabulary token list " + problem);
  }
  ids_.reserve(tokens_.size());
  for (std::size_t id = 0; id < tokens_.size(); ++id) {
    ids_.emplace(tokens_[id], static_cast<int64_t>(id));
  }
}

Vocabulary Vocabulary::Build(
    const std::vector<std::vector<std::string>>& sentences, int64_t min_count,
    int64_t max_size) {
  std::unordered_map<std::string, int64_t> counts;
  for (const std::vector<std::string>& sentence : sentences) {
    for (const std::string& token : sentence) {
      if (!token.empty()) ++counts[token];
    }
  }
  return FromCounts(std::move(counts), min_count, max_size);
}

Vocabulary Vocabulary::FromCounts(
    std::unordered_map<std::string, int64_t> counts, int64_t min_count,
    int64_t max_size) {
  const int64_t special_count = static_cast<int64_t>(SpecialTokens().size());
  if (min_count < 0) {
    throw std::invalid_argument("vocabulary min_count must be >= 0, got " +
                                std::to_string(min_count));
  }
  if (max_size < 0 || (max_size > 0 && max_size < special_count)) {
    throw std::invalid_argument(
        "vocabulary max_size must be 0 (unlimited) or at least " +
        std::to_string(special_count) + " (the special tokens), got " +
        std::to_string(max_size));
  }
  counts.erase("");
  for (const std::string& special : SpecialTokens()) counts.erase(special);

  std::vector<std::pair<std::string, int64_t>> entries;
  for (const auto& [token, count] : counts) {
    if (count >= min_count) entries.emplace_back(token, count);
  }
  // Count descending, then token ascending, so builds are reproducible.
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (max_size > 0 &&
      static_cast<int64_t>(entries.size()) > max_size - special_count) {
    entries.resize(static_cast<std::size_t>(max_size - special_count));
  }
  std::vector<std::string> tokens = SpecialTokens();
  for (auto& entry : entries) tokens.push_back(std::move(entry.first));
  return Vocabulary(std::move(tokens));
}

Vocabulary Vocabulary::Load(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error(LoadError(path, "cannot open file"));
  std::stringstream buffer;
  buffer << file.rdbuf();

  nlohmann::json json;
  try {
    json = nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for numbers beyond double ("1e999").
    throw std::runtime_error(
        LoadError(path, std::string("not valid JSON (") + e.what() + ")"));
  }
  if (!json.is_object()) {
    throw std::runtime_error(LoadError(path, "top level is not a JSON object"));
  }
  const auto format = json.find("format");
  if (format == json.end() || !format->is_string() ||
      format->get<std::string>() != kFormatName) {
    throw std::runtime_error(
        LoadError(path, std::string("\"format\" is not \"") + kFormatName +
                            "\" (is this a vocabulary file?)"));
  }
  const auto version = json.find("format_version");
  if (version == json.end() || !version->is_number_integer()) {
    throw std::runtime_error(
        LoadError(path, "\"format_version\" is missing or not an integer"));
  }
  if (version->get<int64_t>() != kFormatVersion) {
    throw std::runtime_error(LoadError(
        path, "format_version " + std::to_string(version->get<int64_t>()) +
                  " is not supported (expected " +
                  std::to_string(kFormatVersion) + ")"));
  }
  const auto token_array = json.find("tokens");
  if (token_array == json.end() || !token_array->is_array()) {
    throw std::runtime_error(
        LoadError(path, "\"tokens\" is missing or not an array"));
  }
  SpecialNames special_names = SpecialNames::kFanyi;
  if (const auto names = json.find("special_names"); names != json.end()) {
    if (*names != kModelNamesSpecials) {
      throw std::runtime_error(
          LoadError(path, std::string("\"special_names\" is not \"") +
                              kModelNamesSpecials + "\""));
    }
    special_names = SpecialNames::kModel;
  }
  std::vector<std::string> tokens;
  tokens.reserve(token_array->size());
  for (std::size_t i = 0; i < token_array->size(); ++i) {
    const nlohmann::json& entry = (*token_array)[i];
    if (!entry.is_string()) {
      throw std::runtime_error(
          LoadError(path, "entry " + std::to_string(i) + " is not a string"));
    }
    tokens.push_back(entry.get<std::string>());
  }
  const std::string problem = FindTokenListProblem(tokens, special_names);
  if (!problem.empty()) throw std::runtime_error(LoadError(path, problem));
  return Vocabulary(std::move(tokens), special_names);
}

void Vocabulary::Save(const std::string& path) const {
  nlohmann::json json = {{"format", kFormatName},
                         {"format_version", kFormatVersion}};
  if (special_names_ == SpecialNames::kModel) {
    json["special_names"] = kModelNamesSpecials;
  }
  json["tokens"] = tokens_;
  std::string text;
  try {
    text = json.dump(1) + "\n";
  } catch (const nlohmann::json::type_error& e) {
    throw std::runtime_error("cannot write vocabulary file " + path +
                             ": a token is not valid UTF-8 (" + e.what() + ")");
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    throw std::runtime_error("cannot open vocabulary file " + path +
                             " for writing");
  }
  file << text;
  file.close();
  if (!file) {
    throw std::runtime_error("cannot write vocabulary file " + path +
                             " (disk full?)");
  }
}

int64_t Vocabulary::size() const {
  return static_cast<int64_t>(tokens_.size());
}

int64_t Vocabulary::Id(const std::string& token) const {
  const auto it = ids_.find(token);
  return it == ids_.end() ? kUnkId : it->second;
}

const std::string& Vocabulary::Token(int64_t id) const {
  if (id < 0 || id >= size()) {
    throw std::out_of_range("token id " + std::to_string(id) +
                            " is outside the vocabulary [0, " +
                            std::to_string(size()) + ")");
  }
  return tokens_[static_cast<std::size_t>(id)];
}

std::vector<int64_t> Vocabulary::Encode(
    const std::vector<std::string>& tokens) const {
  std::vector<int64_t> ids;
  ids.reserve(tokens.size());
  for (const std::string& token : tokens) ids.push_back(Id(token));
  return ids;
}

std::vector<std::string> Vocabulary::Decode(
    const std::vector<int64_t>& ids) const {
  std::vector<std::string> tokens;
  for (int64_t id : ids) {
    if (id == kEosId) break;
    if (id == kPadId || id == kBosId) continue;
    tokens.push_back(Token(id));
  }
  return tokens;
}

}  // namespace fanyi
