// The language tokens of multilingual models: how M2M-100 and NLLB-200 name
// a language in their vocabularies, for the source token every source
// starts with and the target token every translation starts with.
#ifndef FANYI_COMMON_MODEL_LANGUAGE_TOKENS_H_
#define FANYI_COMMON_MODEL_LANGUAGE_TOKENS_H_

#include <optional>
#include <string>

#include "common/text/vocabulary.h"

namespace fanyi {

// The token `vocabulary` names `language` by (a code as LibreTranslate
// writes it: "en", "zh", "zh-Hant", "pt-BR"): M2M-100's "__en__", or
// NLLB-200's FLORES-200 code ("eng_Latn", "zho_Hant"), whichever it holds;
// nullopt when it holds neither (a model of one pair) or the language is
// one NLLB's table here does not list.
std::optional<std::string> LanguageToken(const Vocabulary& vocabulary,
                                         const std::string& language);

// Whether `vocabulary` is a multilingual model's: it holds English's token
// in either form.
bool IsMultilingual(const Vocabulary& vocabulary);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_LANGUAGE_TOKENS_H_
