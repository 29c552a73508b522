// Conversion between the Simplified and Traditional Chinese scripts.
#ifndef FANYI_COMMON_TEXT_SCRIPT_CONVERTER_H_
#define FANYI_COMMON_TEXT_SCRIPT_CONVERTER_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace opencc {
class SimpleConverter;
}

namespace fanyi {

// The Chinese scripts a translation can be written in.
enum class ChineseScript {
  kSimplified,           // Mainland standard.
  kTraditionalTaiwan,    // Taiwan standard, with Taiwanese vocabulary.
  kTraditionalHongKong,  // Hong Kong standard.
};

// True for the language codes written in Chinese characters whose script
// can be chosen: "zh", "cmn" and "yue".
bool IsChineseLanguage(std::string_view language);

// Parses "simplified", "traditional-tw" or "traditional-hk"; throws
// std::invalid_argument naming the accepted values otherwise.
ChineseScript ParseChineseScript(std::string_view name);
// The inverse of ParseChineseScript.
std::string ChineseScriptName(ChineseScript script);

// Rewrites Chinese text in one script with OpenCC's phrase and character
// dictionaries. Text of any script (even mixed) comes out in the target
// script: it is first converted to Simplified, then, for a Traditional
// target, to that standard (OpenCC's s2twp or s2hk). Characters outside
// Chinese pass through. Thread-safe: conversion only reads the dictionaries.
class ScriptConverter {
 public:
  // Loads OpenCC's dictionaries for `script`; throws std::runtime_error
  // naming the OpenCC configuration that failed to load.
  explicit ScriptConverter(ChineseScript script);
  ~ScriptConverter();
  ScriptConverter(ScriptConverter&&) noexcept;
  ScriptConverter& operator=(ScriptConverter&&) noexcept;

  // A converter that applies OpenCC's configuration `config` (e.g.
  // "s2t.json") alone, as it is; throws like the constructor.
  static ScriptConverter FromOpenCcConfig(const std::string& config);

  // `text` written in this converter's script.
  std::string Convert(std::string_view text) const;

  ChineseScript script() const { return script_; }

 private:
  ScriptConverter() = default;

  ChineseScript script_ = ChineseScript::kSimplified;
  // Applied in order: to Simplified, then (Traditional targets) onwards.
  std::vector<std::unique_ptr<opencc::SimpleConverter>> steps_;
};

// One ScriptConverter per script, each loaded when first asked for (its
// dictionaries take memory and a moment). Thread-safe.
class ScriptConverters {
 public:
  // The converter into `script`; throws as ScriptConverter's constructor.
  const ScriptConverter& For(ChineseScript script) const;

 private:
  mutable std::mutex mutex_;
  // Guarded by mutex_; an entry, once made, is never replaced.
  mutable std::map<ChineseScript, std::unique_ptr<ScriptConverter>> converters_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_SCRIPT_CONVERTER_H_
