#ifndef FANYI_COMMON_TEXT_PLACEHOLDER_MASKER_H_
#define FANYI_COMMON_TEXT_PLACEHOLDER_MASKER_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/text/span_finder.h"
#include "common/text/vocabulary_lookup.h"

namespace fanyi {

// A source term with a fixed translation; an empty target keeps the term as
// written (do not translate).
struct GlossaryEntry {
  std::string source;
  std::string target;
};

// A sentence with its spans replaced by placeholders.
struct MaskedSentence {
  std::string text;  // The sentence with ｟1｠, ｟2｠, ... in place of spans.
  // restorations[k - 1] is what ｟k｠ becomes in the translation: the span as
  // written, or a glossary term's target.
  std::vector<std::string> restorations;
  // Words masked because the vocabulary lacks them, as written.
  std::vector<std::string> unknown_words;
};

// Masks the spans of a sentence to translate that must come through as they
// are (SpanFinder's: inline markers, template tokens, glossary terms, URLs,
// e-mail addresses, words holding a digit), each with a placeholder in
// order of appearance, up to `max_placeholders` per sentence (later spans
// stay as text; inline markers and template tokens are always masked, and
// take the placeholders first; unknown words get placeholders only after
// every other span).
// Thread-safe: const.
class PlaceholderMasker {
 public:
  // Throws std::invalid_argument for an empty glossary source term or a
  // negative `max_placeholders`. Without `template_tokens`, tokens such as
  // %s and {name} are text like any other.
  PlaceholderMasker(std::vector<GlossaryEntry> glossary, int max_placeholders,
                    bool template_tokens = true);

  // Masks the spans of `sentence` (valid UTF-8). `vocabulary` (may be null)
  // is asked about every other word, as written; words it does not know are
  // listed, and masked while placeholders are left, so that names the model
  // never saw pass through.
  MaskedSentence Mask(std::string_view sentence,
                      const VocabularyLookup* vocabulary = nullptr) const;

 private:
  const std::vector<GlossaryEntry> glossary_;
  const SpanFinder finder_;  // Knows the glossary's source terms.
  const int max_placeholders_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_PLACEHOLDER_MASKER_H_
