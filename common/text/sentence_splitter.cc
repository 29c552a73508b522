#include "common/text/sentence_splitter.h"

#include <unicode/brkiter.h>
#include <unicode/locid.h>
#include <unicode/utext.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// Byte length of the whitespace that starts (from_end false) or ends (true)
// `text`, which is valid UTF-8.
std::size_t SpaceRun(std::string_view text, bool from_end) {
  const std::u32string decoded = DecodeUtf8(text);
  std::size_t bytes = 0;
  std::string encoded;
  for (std::size_t k = 0; k < decoded.size(); ++k) {
    const char32_t c = from_end ? decoded[decoded.size() - 1 - k] : decoded[k];
    if (!IsSpace(c)) break;
    encoded.clear();
    AppendUtf8(c, &encoded);
    bytes += encoded.size();
  }
  return bytes;
}

// True when a break before byte `at` of `text` falls between two characters
// that are neither spaces nor CJK, after anything but full-width sentence
// punctuation: inside a URL, an address or a code ("x?y=1", "a.b"), where
// Unicode's rules see a sentence end but a reader does not.
bool IsInsideAWord(std::string_view text, std::size_t at) {
  std::size_t before = at - 1;
  while (before > 0 &&
         (static_cast<unsigned char>(text[before]) & 0xC0) == 0x80) {
    --before;
  }
  std::size_t after_end = at + 1;
  while (after_end < text.size() &&
         (static_cast<unsigned char>(text[after_end]) & 0xC0) == 0x80) {
    ++after_end;
  }
  const std::u32string left = DecodeUtf8(text.substr(before, at - before));
  const std::u32string right = DecodeUtf8(text.substr(at, after_end - at));
  const auto solid = [](char32_t c) {
    return !IsSpace(c) && !IsCjk(c) && !IsControl(c) && c != '\n' && c != '\r';
  };
  // A full-width full stop, question or exclamation mark ends a Chinese or
  // Japanese sentence with no space after it, before Latin letters or
  // digits too ("我爱你。Tom是我的朋友。").
  const char32_t last = left.front();
  if (last == U'。' || last == U'？' || last == U'！' || last == U'．') {
    return false;
  }
  return solid(last) && solid(right.front());
}

// The words of CLDR's English abbreviations ("Go.", "Up.", "OK.", "Mb.")
// that end a sentence far more often than they abbreviate: ordinary words,
// acronyms and units, found by running every capitalized word of the
// training data, and every word of up to four letters, through both
// iterators.
bool IsEnglishWordNotAbbreviation(std::string_view word) {
  static constexpr std::string_view kWords[] = {
      "Act", "All", "As", "By", "CEO", "Card", "Do", "Gb",   "Go",
      "Hat", "Hz",  "In", "Is", "Jam", "Job",  "Kb", "Link", "Long",
      "Mb",  "NTT", "OK", "Ok", "On",  "Or",   "To", "UFO",  "Up"};
  return std::find(std::begin(kWords), std::end(kWords), word) !=
         std::end(kWords);
}

// The ASCII letters just before the full stop that ends `text` (spaces
// after it skipped): "Go" for "Let's Go. ", empty without one. Looks back
// over the spaces and at most 8 letters.
std::string_view WordBeforeFullStop(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0 && (text[end - 1] == ' ' || text[end - 1] == '\t' ||
                     text[end - 1] == '\n' || text[end - 1] == '\r')) {
    --end;
  }
  if (end == 0 || text[end - 1] != '.') return {};
  --end;
  const auto letter = [&text](std::size_t at) {
    return (text[at] >= 'a' && text[at] <= 'z') ||
           (text[at] >= 'A' && text[at] <= 'Z');
  };
  std::size_t begin = end;
  while (begin > 0 && end - begin < 8 && letter(begin - 1)) --begin;
  if (begin > 0 && letter(begin - 1)) return {};  // Longer than any listed.
  return text.substr(begin, end - begin);
}

bool IsLineBreak(char c) { return c == '\n' || c == '\r'; }

// The line breaks of a gap, in order ("\r\n" stays a pair).
std::string LineBreaksOf(std::string_view gap) {
  std::string breaks;
  for (char c : gap) {
    if (IsLineBreak(c)) breaks.push_back(c);
  }
  return breaks;
}

}  // namespace

SentenceSplitter::SentenceSplitter(const std::string& language)
    : english_(language == "en" || language.rfind("en-", 0) == 0 ||
               language.rfind("en_", 0) == 0) {
  UErrorCode status = U_ZERO_ERROR;
  plain_prototype_.reset(icu::BreakIterator::createSentenceInstance(
      icu::Locale(language.c_str()), status));
  // "ss=standard": suppress breaks after CLDR's abbreviations ("Mr.").
  const icu::Locale locale((language + "@ss=standard").c_str());
  prototype_.reset(icu::BreakIterator::createSentenceInstance(locale, status));
  if (U_FAILURE(status) || prototype_ == nullptr ||
      plain_prototype_ == nullptr) {
    throw std::runtime_error("ICU has no sentence rules for language \"" +
                             language + "\": " + u_errorName(status));
  }
}

SentenceSplitter::~SentenceSplitter() = default;
SentenceSplitter::SentenceSplitter(SentenceSplitter&&) noexcept = default;
SentenceSplitter& SentenceSplitter::operator=(SentenceSplitter&&) noexcept =
    default;

SplitText SentenceSplitter::Split(std::string_view text) const {
  DecodeUtf8(text);  // Validates, naming the first bad byte.
  // Every break Unicode's rules see, kept where CLDR's abbreviations keep
  // it too, or where the "abbreviation" is an English word.
  std::unique_ptr<icu::BreakIterator> breaks(plain_prototype_->clone());
  std::unique_ptr<icu::BreakIterator> kept(prototype_->clone());
  UErrorCode status = U_ZERO_ERROR;
  // A UTF-8 UText makes the boundaries byte offsets into `text`.
  UText* utext = utext_openUTF8(nullptr, text.data(),
                                static_cast<int64_t>(text.size()), &status);
  breaks->setText(utext, status);
  kept->setText(utext, status);
  if (U_FAILURE(status)) {
    utext_close(utext);
    throw std::runtime_error(std::string("ICU sentence breaks failed: ") +
                             u_errorName(status));
  }
  SplitText split;
  std::string gap;
  int32_t begin = breaks->first();
  // Both iterators move forward only, together: one pass each.
  int32_t kept_at = kept->first();
  const auto text_end = static_cast<int32_t>(text.size());
  for (int32_t end = breaks->next(); end != icu::BreakIterator::DONE;
       end = breaks->next()) {
    if (end < text_end && IsInsideAWord(text, end)) {
      continue;  // "example.com/x?y=1": one sentence with what follows.
    }
    while (kept_at != icu::BreakIterator::DONE && kept_at < end) {
      kept_at = kept->next();
    }
    // The text's end ends a sentence whatever precedes it ("Call Mr.").
    if (end < text_end && kept_at != end &&
        !(english_ && IsEnglishWordNotAbbreviation(WordBeforeFullStop(
                          text.substr(begin, end - begin))))) {
      continue;  // "Mr. Smith": one sentence.
    }
    std::string_view segment = text.substr(begin, end - begin);
    begin = end;
    const std::size_t leading = SpaceRun(segment, /*from_end=*/false);
    if (leading == segment.size()) {  // Blank: only whitespace.
      gap.append(segment);
      continue;
    }
    const std::size_t trailing = SpaceRun(segment, /*from_end=*/true);
    gap.append(segment.substr(0, leading));
    split.gaps.push_back(std::move(gap));
    split.sentences.emplace_back(
        segment.substr(leading, segment.size() - leading - trailing));
    gap.assign(segment.substr(segment.size() - trailing));
  }
  utext_close(utext);
  split.gaps.push_back(std::move(gap));
  return split;
}

std::string JoinSentences(const SplitText& layout,
                          const std::vector<std::string>& translations,
                          std::string_view separator) {
  if (translations.size() != layout.sentences.size() ||
      layout.gaps.size() != layout.sentences.size() + 1) {
    throw std::invalid_argument(
        "JoinSentences: " + std::to_string(translations.size()) +
        " translations for " + std::to_string(layout.sentences.size()) +
        " sentences");
  }
  std::string text = LineBreaksOf(layout.gaps.front());
  for (std::size_t i = 0; i < translations.size(); ++i) {
    if (i > 0) {
      const std::string breaks = LineBreaksOf(layout.gaps[i]);
      text.append(breaks.empty() ? std::string(separator) : breaks);
    }
    text.append(translations[i]);
  }
  text.append(LineBreaksOf(layout.gaps.back()));
  return text;
}

}  // namespace fanyi
