#ifndef FANYI_SERVER_HTTP_LANGUAGE_CODES_H_
#define FANYI_SERVER_HTTP_LANGUAGE_CODES_H_

#include <optional>
#include <string>
#include <vector>

#include "common/text/script_converter.h"

namespace fanyi {

// A language code as a client writes it, read as the model language and,
// for Chinese, the script it asks for.
struct LanguageCode {
  std::string language;                 // A model's code: "en", "zh".
  std::optional<ChineseScript> script;  // Unset: whatever the model writes.
};

// Reads a client's code, in any letter case: LibreTranslate's "zh" and
// "zh-Hans" (Simplified), "zt" and "zh-Hant" (Traditional, Taiwan), and
// beyond it "zh-CN" and "zh-SG" (Simplified), "zh-TW" (Taiwan) and "zh-HK"
// (Hong Kong); any other code by its primary subtag ("en-US" is "en").
// Null for a code that is not one ("", "e n").
std::optional<LanguageCode> ReadLanguageCode(const std::string& code);

// A code and its name as LibreTranslate lists them in /languages.
struct ListedLanguage {
  std::string code;
  std::string name;
};

// The codes under which a client may ask for model language `language`:
// for Chinese "zh", "zh-Hans", "zh-Hant" and "zt"; for others the code
// itself. Names are English ("Chinese (Traditional)"), or the code when
// unknown.
std::vector<ListedLanguage> ListedCodes(const std::string& language);

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_LANGUAGE_CODES_H_
