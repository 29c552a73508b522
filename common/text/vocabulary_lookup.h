#ifndef FANYI_COMMON_TEXT_VOCABULARY_LOOKUP_H_
#define FANYI_COMMON_TEXT_VOCABULARY_LOOKUP_H_

#include <string>
#include <string_view>

#include "common/text/script_converter.h"
#include "common/text/tokenizer.h"
#include "common/text/vocabulary.h"

namespace fanyi {

// Whether a model's source vocabulary knows a word, seen as the model sees
// it: in the script its source was trained in, tokenized (and so lowercased
// only when the model lowercases). What the placeholder masker is given to
// find the words that must pass through. The referenced objects must
// outlive the lookup; thread-safe, as they are.
class VocabularyLookup {
 public:
  // `to_trained_script` may be null: the text is read as it is.
  VocabularyLookup(const Tokenizer& tokenizer, const Vocabulary& vocabulary,
                   const ScriptConverter* to_trained_script);

  // `text` in the script the source side was trained in.
  std::string Normalize(std::string_view text) const;
  // True when `word`, as written, has a token the vocabulary lacks.
  bool IsUnknown(std::string_view word) const;

 private:
  const Tokenizer& tokenizer_;
  const Vocabulary& vocabulary_;
  const ScriptConverter* const to_trained_script_;  // May be null.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_VOCABULARY_LOOKUP_H_
