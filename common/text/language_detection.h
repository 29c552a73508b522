#ifndef FANYI_COMMON_TEXT_LANGUAGE_DETECTION_H_
#define FANYI_COMMON_TEXT_LANGUAGE_DETECTION_H_

#include <string>
#include <string_view>
#include <vector>

namespace fanyi {

// A language a text is written in, as detection finds it.
struct DetectedLanguage {
  std::string language;  // A model's code: "en", "zh" (either script).
  int confidence = 0;    // 0-100.
};

// The languages among `candidates` (model language codes) that `text` is
// written in, most likely first, with at least one entry when there are
// candidates. CLD2 (Compact Language Detector 2) gives each language's
// share of the text as its confidence. When it finds none of the
// candidates (a text too short for it, say), the text's script decides: a
// text mostly of CJK characters is "zh" (or "ja", "ko"), one mostly of
// other letters the first other candidate; the share of its letters in
// that script is then the confidence. Throws std::invalid_argument for
// invalid UTF-8.
std::vector<DetectedLanguage> DetectLanguages(
    std::string_view text, const std::vector<std::string>& candidates);

// The languages detection names besides a server's own: those
// LibreTranslate offers, as model codes ("zh" for either script).
const std::vector<std::string>& CommonLanguages();

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_LANGUAGE_DETECTION_H_
