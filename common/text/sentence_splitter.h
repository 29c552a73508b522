// Cutting a text into sentences and putting translated sentences back into
// the text's layout.
#ifndef FANYI_COMMON_TEXT_SENTENCE_SPLITTER_H_
#define FANYI_COMMON_TEXT_SENTENCE_SPLITTER_H_

#include <unicode/uversion.h>  // ICU's versioned namespace, for the forward

#include <memory>
#include <string>
#include <string_view>
#include <vector>
// declaration.

U_NAMESPACE_BEGIN
class BreakIterator;
U_NAMESPACE_END

namespace fanyi {

// A text as sentences and the whitespace around them:
//   gaps[0] sentences[0] gaps[1] sentences[1] ... sentences[n-1] gaps[n]
// concatenates back to the text. Every sentence has a non-space character;
// gaps hold only whitespace (line breaks included), so gaps.size() ==
// sentences.size() + 1.
struct SplitText {
  std::vector<std::string> sentences;
  std::vector<std::string> gaps;
};

// Finds sentence boundaries with ICU's BreakIterator (Unicode's sentence
// rules with CLDR's list of abbreviations that do not end a sentence, such
// as "Mr." and "e.g."). CLDR's English list also holds ordinary words
// ("Go.", "Up.", "OK.") and units ("5 Mb."), which end sentences far more
// often than they abbreviate: after those a sentence ends, so that "Go. Go."
// is two sentences with a translation each. A line break always ends a
// sentence, so lines and paragraphs keep their shape. Thread-safe: each
// call works on its own clones of the iterators.
class SentenceSplitter {
 public:
  // For the rules of `language` (an ISO 639 code such as "en"); throws
  // std::runtime_error when ICU has no sentence rules to give.
  explicit SentenceSplitter(const std::string& language);
  ~SentenceSplitter();
  SentenceSplitter(SentenceSplitter&&) noexcept;
  SentenceSplitter& operator=(SentenceSplitter&&) noexcept;

  // Splits `text`, which must be valid UTF-8 (std::invalid_argument
  // otherwise).
  SplitText Split(std::string_view text) const;

 private:
  // Unicode's rules alone, and with CLDR's abbreviations.
  std::unique_ptr<icu::BreakIterator> plain_prototype_;
  std::unique_ptr<icu::BreakIterator> prototype_;
  bool english_ = false;  // Whose CLDR list holds ordinary words.
};

// Puts translated sentences (one per sentence of `layout`, in order) back
// into the layout: a gap holding a line break keeps its line breaks exactly
// (blank lines included) and drops the spaces around them; a gap within a
// line becomes `separator` ("" between Chinese sentences, " " between
// English ones); leading and trailing gaps keep only their line breaks.
// Throws std::invalid_argument when the counts differ.
std::string JoinSentences(const SplitText& layout,
                          const std::vector<std::string>& translations,
                          std::string_view separator);

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_SENTENCE_SPLITTER_H_
