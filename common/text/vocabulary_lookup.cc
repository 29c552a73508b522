#include "common/text/vocabulary_lookup.h"

namespace fanyi {

VocabularyLookup::VocabularyLookup(const Tokenizer& tokenizer,
                                   const Vocabulary& vocabulary,
                                   const ScriptConverter* to_trained_script)
    : tokenizer_(tokenizer),
      vocabulary_(vocabulary),
      to_trained_script_(to_trained_script) {}

std::string VocabularyLookup::Normalize(std::string_view text) const {
  return to_trained_script_ != nullptr ? to_trained_script_->Convert(text)
                                       : std::string(text);
}

bool VocabularyLookup::IsUnknown(std::string_view word) const {
  for (const std::string& token : tokenizer_.Tokenize(Normalize(word))) {
    if (vocabulary_.Id(token) == Vocabulary::kUnkId) return true;
  }
  return false;
}

}  // namespace fanyi
