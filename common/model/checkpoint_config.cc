#include "common/model/checkpoint_config.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fanyi {
namespace {

namespace fs = std::filesystem;

constexpr char kCheckpointFormatName[] = "fanyi-checkpoint";
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

}  // namespace

nlohmann::json CheckpointConfigJson(const Checkpoint& checkpoint) {
  nlohmann::json config = {
      {"format", kCheckpointFormatName},
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
  return config;
}

nlohmann::json ReadCheckpointConfig(const fs::path& path) {
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
      config.at("format") != kCheckpointFormatName) {
    throw std::runtime_error(path.string() +
                             ": not a fanyi checkpoint config "
                             "(\"format\" must be \"" +
                             kCheckpointFormatName + "\")");
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

Checkpoint CheckpointFromConfig(const nlohmann::json& config,
                                const fs::path& config_path) {
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
  return checkpoint;
}

}  // namespace fanyi
