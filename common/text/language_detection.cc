#include "common/text/language_detection.h"

#include <cld2/public/compact_lang_det.h>

#include <algorithm>
#include <map>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// A CLD2 language as a model's code: Chinese in either script is "zh",
// and CLD2's older codes are today's (Hebrew "he", Norwegian Bokmål "nb").
std::string ModelCode(CLD2::Language language) {
  const std::string code = CLD2::LanguageCode(language);
  if (code == "zh-Hant") return "zh";
  if (code == "iw") return "he";
  if (code == "no") return "nb";
  return code;
}

bool IsCjkLanguage(const std::string& language) {
  return language == "zh" || language == "ja" || language == "ko" ||
         language == "cmn" || language == "yue";
}

// The fallback by script: a CJK candidate for a text mostly of CJK
// characters, else the first other candidate.
DetectedLanguage ByScript(std::u32string_view code_points,
                          const std::vector<std::string>& candidates) {
  int cjk = 0;
  int other = 0;
  for (char32_t c : code_points) {
    if (IsCjk(c)) {
      ++cjk;
    } else if (IsLetterOrDigit(c)) {
      ++other;
    }
  }
  const bool mostly_cjk = cjk > other;
  const int letters = std::max(cjk + other, 1);
  for (const std::string& candidate : candidates) {
    if (IsCjkLanguage(candidate) == mostly_cjk) {
      return {candidate, 100 * (mostly_cjk ? cjk : other) / letters};
    }
  }
  return {candidates.front(), 0};
}

}  // namespace

std::vector<DetectedLanguage> DetectLanguages(
    std::string_view text, const std::vector<std::string>& candidates) {
  const std::u32string code_points = DecodeUtf8(text);  // Throws if invalid.
  std::vector<DetectedLanguage> detected;
  if (candidates.empty()) return detected;
  CLD2::Language languages[3];
  int percents[3];
  int text_bytes = 0;
  bool reliable = false;
  CLD2::DetectLanguageSummary(text.data(), static_cast<int>(text.size()),
                              /*is_plain_text=*/true, languages, percents,
                              &text_bytes, &reliable);
  std::map<std::string, int> shares;  // By candidate.
  for (int i = 0; i < 3; ++i) {
    const std::string code = ModelCode(languages[i]);
    if (std::find(candidates.begin(), candidates.end(), code) !=
        candidates.end()) {
      shares[code] += percents[i];
    }
  }
  for (const auto& [language, share] : shares) {
    if (share > 0) detected.push_back({language, std::min(share, 100)});
  }
  if (detected.empty()) return {ByScript(code_points, candidates)};
  std::stable_sort(detected.begin(), detected.end(),
                   [](const DetectedLanguage& a, const DetectedLanguage& b) {
                     return a.confidence > b.confidence;
                   });
  return detected;
}

const std::vector<std::string>& CommonLanguages() {
  static const std::vector<std::string> kLanguages = {
      "ar", "az", "bg", "bn", "ca", "cs", "da", "de", "el", "en", "eo", "es",
      "et", "eu", "fa", "fi", "fr", "ga", "gl", "he", "hi", "hu", "id", "it",
      "ja", "ko", "ky", "lt", "lv", "ms", "nb", "nl", "pl", "pt", "ro", "ru",
      "sk", "sl", "sq", "sr", "sv", "th", "tl", "tr", "uk", "ur", "vi", "zh"};
  return kLanguages;
}

}  // namespace fanyi
