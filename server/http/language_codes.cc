#include "server/http/language_codes.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace fanyi {
namespace {

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string EnglishName(const std::string& language) {
  static const std::map<std::string, std::string> kNames = {
      {"ar", "Arabic"},   {"de", "German"},  {"en", "English"},
      {"es", "Spanish"},  {"fr", "French"},  {"it", "Italian"},
      {"ja", "Japanese"}, {"ko", "Korean"},  {"pt", "Portuguese"},
      {"ru", "Russian"},  {"zh", "Chinese"}, {"yue", "Cantonese"},
      {"cmn", "Mandarin"}};
  const auto found = kNames.find(language);
  return found == kNames.end() ? language : found->second;
}

}  // namespace

std::optional<LanguageCode> ReadLanguageCode(const std::string& code) {
  const std::string lower = Lowercase(code);
  if (lower.empty() ||
      !std::all_of(lower.begin(), lower.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '-' || c == '_';
      })) {
    return std::nullopt;
  }
  static const std::map<std::string, ChineseScript> kChinese = {
      {"zh", ChineseScript::kSimplified},
      {"zh-hans", ChineseScript::kSimplified},
      {"zh-cn", ChineseScript::kSimplified},
      {"zh-sg", ChineseScript::kSimplified},
      {"zh-hans-cn", ChineseScript::kSimplified},
      {"zt", ChineseScript::kTraditionalTaiwan},
      {"zh-hant", ChineseScript::kTraditionalTaiwan},
      {"zh-tw", ChineseScript::kTraditionalTaiwan},
      {"zh-hant-tw", ChineseScript::kTraditionalTaiwan},
      {"zh-hk", ChineseScript::kTraditionalHongKong},
      {"zh-hant-hk", ChineseScript::kTraditionalHongKong}};
  std::string normalized = lower;
  std::replace(normalized.begin(), normalized.end(), '_', '-');
  if (const auto found = kChinese.find(normalized); found != kChinese.end()) {
    return LanguageCode{"zh", found->second};
  }
  const std::string primary = normalized.substr(0, normalized.find('-'));
  if (primary.empty()) return std::nullopt;
  return LanguageCode{primary, std::nullopt};
}

std::vector<ListedLanguage> ListedCodes(const std::string& language) {
  if (language == "zh") {
    return {{"zh", "Chinese"},
            {"zh-Hans", "Chinese (Simplified)"},
            {"zh-Hant", "Chinese (Traditional)"},
            {"zt", "Chinese (traditional)"}};
  }
  return {{language, EnglishName(language)}};
}

}  // namespace fanyi
