#include "common/text/script_converter.h"

#include <SimpleConverter.hpp>
#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

// Loads one of OpenCC's installed configurations (e.g. "t2s.json").
std::unique_ptr<opencc::SimpleConverter> LoadOpenCc(const std::string& config) {
  try {
    return std::make_unique<opencc::SimpleConverter>(config);
  } catch (const std::exception& e) {
    throw std::runtime_error("OpenCC configuration " + config +
                             " failed to load (is the OpenCC data package "
                             "installed?): " +
                             e.what());
  }
}

}  // namespace

bool IsChineseLanguage(std::string_view language) {
  return language == "zh" || language == "cmn" || language == "yue";
}

ChineseScript ParseChineseScript(std::string_view name) {
  if (name == "simplified") return ChineseScript::kSimplified;
  if (name == "traditional-tw") return ChineseScript::kTraditionalTaiwan;
  if (name == "traditional-hk") return ChineseScript::kTraditionalHongKong;
  throw std::invalid_argument(
      "unknown Chinese script \"" + std::string(name) +
      "\"; use simplified, traditional-tw or traditional-hk");
}

std::string ChineseScriptName(ChineseScript script) {
  switch (script) {
    case ChineseScript::kSimplified:
      return "simplified";
    case ChineseScript::kTraditionalTaiwan:
      return "traditional-tw";
    case ChineseScript::kTraditionalHongKong:
      return "traditional-hk";
  }
  return "simplified";
}

ScriptConverter::ScriptConverter(ChineseScript script) : script_(script) {
  // Traditional forms first become Simplified, so that mixed text converts
  // as a whole: s2twp and s2hk only map Simplified characters.
  steps_.push_back(LoadOpenCc("t2s.json"));
  if (script == ChineseScript::kTraditionalTaiwan) {
    steps_.push_back(LoadOpenCc("s2twp.json"));
  } else if (script == ChineseScript::kTraditionalHongKong) {
    steps_.push_back(LoadOpenCc("s2hk.json"));
  }
}

ScriptConverter ScriptConverter::FromOpenCcConfig(const std::string& config) {
  ScriptConverter converter;
  converter.steps_.push_back(LoadOpenCc(config));
  return converter;
}

ScriptConverter::~ScriptConverter() = default;
ScriptConverter::ScriptConverter(ScriptConverter&&) noexcept = default;
ScriptConverter& ScriptConverter::operator=(ScriptConverter&&) noexcept =
    default;

std::string ScriptConverter::Convert(std::string_view text) const {
  std::string converted(text);
  for (const auto& step : steps_) {
    converted = step->Convert(converted.data(), converted.size());
  }
  return converted;
}

const ScriptConverter& ScriptConverters::For(ChineseScript script) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<ScriptConverter>& converter = converters_[script];
  if (converter == nullptr) {
    converter = std::make_unique<ScriptConverter>(script);
  }
  return *converter;
}

}  // namespace fanyi
