// UTF-8 decoding/encoding and the Unicode character classes used by the
// tokenizers and the BLEU metric. Hand-written range tables, no ICU.
#ifndef FANYI_COMMON_TEXT_UTF8_H_
#define FANYI_COMMON_TEXT_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace fanyi {

// Decodes strict UTF-8 into code points. Throws std::invalid_argument
// ("invalid UTF-8 at byte N", N counted from 0) on overlong forms,
// surrogates, truncated sequences, stray continuation bytes or values above
// U+10FFFF.
std::u32string DecodeUtf8(std::string_view text);

// The characters of `text`, valid UTF-8 or not: every byte that does not
// continue a sequence starts one. One pass, no decoding, no allocation.
std::size_t CountUtf8Characters(std::string_view text);

// `text` when it is valid UTF-8 (JSON keeps only that: names taken from
// file and directory names), else `fallback`.
std::string Utf8OrElse(const std::string& text, const std::string& fallback);

// Appends the UTF-8 encoding of `code_point` to `out`. Throws
// std::invalid_argument for surrogates and values above U+10FFFF.
void AppendUtf8(char32_t code_point, std::string* out);

// Encodes code points as UTF-8 (see AppendUtf8 for the errors).
std::string EncodeUtf8(std::u32string_view code_points);

// True for characters of scripts written without spaces between words:
// CJK ideographs (all extensions), compatibility ideographs, radicals,
// bopomofo, kana and hangul.
bool IsCjk(char32_t c);

// True for letters and digits of space-separated scripts (Latin, Greek,
// Cyrillic, Armenian, Hebrew, Arabic, Indic, Thai, ... and full-width Latin),
// including combining marks so that decomposed accents stay inside a word.
// Never true for a character for which IsCjk is true.
bool IsLetterOrDigit(char32_t c);

// True for whitespace: ASCII spaces, U+0085, U+00A0, U+1680,
// U+2000-U+200B, U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF.
bool IsSpace(char32_t c);

// True for the ASCII whitespace of HTML and Markdown: space, tab, line
// feed, carriage return and form feed. A byte test, for scanning markup.
bool IsAsciiSpace(char c);

// True when `text` is empty or only spaces, tabs and line breaks: nothing
// to translate, passed through as it came.
bool IsBlank(std::string_view text);

// `text` with its ASCII letters lowercased, other bytes as they are: for
// names a format spells in any case (charsets, languages, extensions).
std::string AsciiLowercase(std::string_view text);

// True for '0' to '9'.
bool IsAsciiDigit(char32_t c);

// True for the apostrophes of English text: ' and ’ (U+2019).
bool IsApostrophe(char32_t c);

// `text` with each run of ASCII whitespace (line breaks and tabs included)
// as one space, and none at the ends: a catalog's or a suggestion's text as
// one training line.
std::string SqueezedWhitespace(std::string_view text);

// True for control characters (C0, DEL, C1) that are not whitespace.
bool IsControl(char32_t c);

// True for closing punctuation that ends a sentence or a clause (and not
// a URL that it follows): . , ; : ! ? ) ] } quotes, 。 and ，.
bool IsTrailingPunctuation(char32_t c);

// Lowercases ASCII, Latin-1 Supplement, Latin Extended-A, Greek, Cyrillic
// and full-width Latin letters; returns other characters unchanged.
char32_t ToLower(char32_t c);

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_UTF8_H_
