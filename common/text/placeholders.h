// Spans that pass through translation verbatim (numbers, prices, times,
// codes, URLs, e-mail addresses, unknown names) or with a fixed translation
// (glossary terms), by way of placeholder tokens.
#ifndef FANYI_COMMON_TEXT_PLACEHOLDERS_H_
#define FANYI_COMMON_TEXT_PLACEHOLDERS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text/vocabulary_lookup.h"

namespace fanyi {

// The placeholder token for the `index`-th span of a sentence (from 1):
// "｟1｠", "｟2｠", ... (OpenNMT's placeholder brackets, U+FF5F and U+FF60,
// which the tokenizers keep as one token).
std::string PlaceholderToken(int index);

// The index of a placeholder token, or 0 when `token` is not one.
int PlaceholderIndex(std::string_view token);

// The end of the placeholder form (｟, digits, ｠) that starts at text[i],
// or `i` when none does; for scanners of decoded text (the tokenizers).
std::size_t PlaceholderEnd(std::u32string_view text, std::size_t i);

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

// A training pair with the spans both sides share replaced.
struct MaskedPair {
  std::string source;
  std::string target;
  int spans = 0;  // Placeholders in each side.
};

// Finds the spans of a sentence that must come through translation as they
// are: glossary terms (matched case-insensitively on word boundaries, the
// longest first), URLs (http://, https://, www.), e-mail addresses, and
// words holding a digit (numbers, decimals, times, dates, prices with their
// currency sign and percent sign, flight and product codes such as BA2490
// or X-100). Replaces each with a placeholder in order of appearance, up to
// `max_placeholders` per sentence (later spans stay as text; unknown words
// get placeholders only after every other span).
class PlaceholderMasker {
 public:
  // Throws std::invalid_argument for an empty glossary source term or a
  // negative `max_placeholders`.
  PlaceholderMasker(std::vector<GlossaryEntry> glossary, int max_placeholders);

  // Masks the spans of `sentence` (valid UTF-8). `vocabulary` (may be null)
  // is asked about every other word, as written; words it does not know are
  // listed, and masked while placeholders are left, so that names the model
  // never saw pass through.
  MaskedSentence Mask(std::string_view sentence,
                      const VocabularyLookup* vocabulary = nullptr) const;

  // For a training pair: masks the source spans (glossary aside) that the
  // target also has, written the same, or for numbers with the same digits
  // ("1,000" and "1000"), and Latin words the target copies ("iPhone"),
  // each with one placeholder on both sides, so that the model learns to
  // carry placeholders across. Spans the target lacks stay as text. The
  // spans are numbered from `first_index` + 1, so that training can spread
  // them over every index a sentence may use.
  MaskedPair MaskPair(std::string_view source, std::string_view target,
                      int first_index = 0) const;

 private:
  std::vector<GlossaryEntry> glossary_;
  std::vector<std::u32string> glossary_keys_;  // Lowercased sources.
  int max_placeholders_;
};

// A translation with its placeholders replaced.
struct RestoredText {
  std::string text;
  // Spans whose placeholder the translation lacked: appended at its end
  // (before closing punctuation), so that nothing is lost.
  int unplaced = 0;
};

// Replaces each ｟k｠ in `translation` by restorations[k - 1]. A placeholder
// the translation repeats is restored once; one with no restoration is
// dropped; a restoration whose placeholder is missing is appended before
// the final punctuation, separated from Latin text by a space.
RestoredText RestorePlaceholders(std::string_view translation,
                                 const std::vector<std::string>& restorations);

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_PLACEHOLDERS_H_
