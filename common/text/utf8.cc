#include "common/text/utf8.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fanyi {
namespace {

struct CodePointRange {
  char32_t first;
  char32_t last;
};

template <std::size_t N>
bool InRanges(char32_t c, const CodePointRange (&ranges)[N]) {
  for (const CodePointRange& range : ranges) {
    if (c >= range.first && c <= range.last) return true;
  }
  return false;
}

constexpr CodePointRange kCjkRanges[] = {
    {0x1100, 0x11FF},    // Hangul Jamo
    {0x2E80, 0x2FDF},    // CJK Radicals Supplement, Kangxi Radicals
    {0x3005, 0x3007},    // iteration mark, closing mark, ideographic zero
    {0x3021, 0x3029},    // Hangzhou numerals
    {0x3031, 0x3035},    // vertical kana repeat marks
    {0x303B, 0x303C},    // vertical ideographic iteration mark, masu mark
    {0x3040, 0x30FF},    // Hiragana, Katakana
    {0x3100, 0x318F},    // Bopomofo, Hangul Compatibility Jamo
    {0x31A0, 0x31BF},    // Bopomofo Extended
    {0x31F0, 0x31FF},    // Katakana Phonetic Extensions
    {0x3400, 0x4DBF},    // CJK Extension A
    {0x4E00, 0x9FFF},    // CJK Unified Ideographs
    {0xA960, 0xA97F},    // Hangul Jamo Extended-A
    {0xAC00, 0xD7FF},    // Hangul Syllables, Jamo Extended-B
    {0xF900, 0xFAFF},    // CJK Compatibility Ideographs
    {0xFF66, 0xFFDC},    // half-width Katakana and Hangul
    {0x1B000, 0x1B16F},  // Kana Supplement, Kana Extended-A
    {0x20000, 0x2FA1F},  // CJK Extensions B-F, Compatibility Supplement
    {0x30000, 0x323AF},  // CJK Extensions G-H
};

constexpr CodePointRange kLetterOrDigitRanges[] = {
    {'0', '9'},        // ASCII digits
    {'A', 'Z'},        // ASCII upper case
    {'a', 'z'},        // ASCII lower case
    {0x00AA, 0x00AA},  // feminine ordinal
    {0x00B5, 0x00B5},  // micro sign
    {0x00BA, 0x00BA},  // masculine ordinal
    {0x00C0, 0x00D6},  // Latin-1 letters
    {0x00D8, 0x00F6},  // Latin-1 letters
    {0x00F8, 0x036F},  // Latin Extended, IPA, modifiers, combining marks
    {0x0370, 0x037D},  // Greek (U+037E is a question mark)
    {0x037F, 0x0386},  // Greek
    {0x0388, 0x03FF},  // Greek
    {0x0400, 0x0481},  // Cyrillic
    {0x0483, 0x052F},  // Cyrillic combining marks and supplement
    {0x0531, 0x0556},  // Armenian upper case
    {0x0561, 0x0587},  // Armenian lower case
    {0x0591, 0x05BD},  // Hebrew points
    {0x05BF, 0x05BF},  // Hebrew point
    {0x05C1, 0x05C2},  // Hebrew points
    {0x05C4, 0x05C5},  // Hebrew marks
    {0x05C7, 0x05F2},  // Hebrew letters
    {0x0610, 0x061A},  // Arabic marks
    {0x0620, 0x0669},  // Arabic letters and digits
    {0x066E, 0x06D3},  // Arabic letters
    {0x06D5, 0x06FF},  // Arabic letters
    {0x0900, 0x0963},  // Devanagari (U+0964/5 are dandas)
    {0x0966, 0x0DFF},  // other Indic scripts, Sinhala
    {0x0E00, 0x0EFF},  // Thai, Lao
    {0x10A0, 0x10FF},  // Georgian
    {0x1AB0, 0x1AFF},  // combining marks extended
    {0x1DC0, 0x1DFF},  // combining marks supplement
    {0x1E00, 0x1FFF},  // Latin Extended Additional, Greek Extended
    {0x2C60, 0x2C7F},  // Latin Extended-C
    {0x2DE0, 0x2DFF},  // Cyrillic Extended-A
    {0xA640, 0xA69F},  // Cyrillic Extended-B
    {0xA720, 0xA7FF},  // Latin Extended-D
    {0xFF10, 0xFF19},  // full-width digits
    {0xFF21, 0xFF3A},  // full-width upper case
    {0xFF41, 0xFF5A},  // full-width lower case
};

constexpr CodePointRange kSpaceRanges[] = {
    {0x0009, 0x000D}, {0x0020, 0x0020}, {0x0085, 0x0085}, {0x00A0, 0x00A0},
    {0x1680, 0x1680}, {0x2000, 0x200B}, {0x2028, 0x2029}, {0x202F, 0x202F},
    {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF},
};

[[noreturn]] void ThrowInvalid(std::size_t offset) {
  throw std::invalid_argument("invalid UTF-8 at byte " +
                              std::to_string(offset));
}

}  // namespace

std::u32string DecodeUtf8(std::string_view text) {
  std::u32string code_points;
  code_points.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      code_points.push_back(lead);
      ++i;
      continue;
    }
    int length = 0;
    char32_t value = 0;
    char32_t minimum = 0;  // smallest value allowed for this length
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
      value = lead & 0x1F;
      minimum = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      value = lead & 0x0F;
      minimum = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      value = lead & 0x07;
      minimum = 0x10000;
    } else {
      ThrowInvalid(i);  // stray continuation byte, 0xC0/0xC1, 0xF5..0xFF
    }
    if (i + length > text.size()) ThrowInvalid(i);
    for (int k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) ThrowInvalid(i);
      value = (value << 6) | (next & 0x3F);
    }
    if (value < minimum || value > 0x10FFFF ||
        (value >= 0xD800 && value <= 0xDFFF)) {
      ThrowInvalid(i);
    }
    code_points.push_back(value);
    i += length;
  }
  return code_points;
}

std::size_t CountUtf8Characters(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(),
      [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string Utf8OrElse(const std::string& text, const std::string& fallback) {
  try {
    DecodeUtf8(text);
    return text;
  } catch (const std::invalid_argument&) {
    return fallback;
  }
}

void AppendUtf8(char32_t code_point, std::string* out) {
  if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    throw std::invalid_argument("cannot encode code point " +
                                std::to_string(code_point) +
                                " as UTF-8: not a Unicode scalar value");
  }
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

std::string EncodeUtf8(std::u32string_view code_points) {
  std::string out;
  out.reserve(code_points.size());
  for (char32_t c : code_points) AppendUtf8(c, &out);
  return out;
}

bool IsCjk(char32_t c) { return c >= 0x1100 && InRanges(c, kCjkRanges); }

bool IsLetterOrDigit(char32_t c) { return InRanges(c, kLetterOrDigitRanges); }

bool IsSpace(char32_t c) { return InRanges(c, kSpaceRanges); }

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

bool IsBlank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::string AsciiLowercase(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

bool IsAsciiDigit(char32_t c) { return c >= '0' && c <= '9'; }

bool IsApostrophe(char32_t c) { return c == '\'' || c == 0x2019; }

std::string SqueezedWhitespace(std::string_view text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(c);
  }
  return out;
}

bool IsControl(char32_t c) {
  return (c < 0x20 || (c >= 0x7F && c <= 0x9F)) && !IsSpace(c);
}

bool IsTrailingPunctuation(char32_t c) {
  return c == '.' || c == ',' || c == ';' || c == ':' || c == '!' || c == '?' ||
         c == ')' || c == ']' || c == '}' || c == '"' || c == '\'' ||
         c == 0x2019 || c == 0x201D || c == 0x3002 || c == 0xFF0C;
}

char32_t ToLower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  // Latin-1 Supplement (U+00D7 is the multiplication sign).
  if (c >= 0x00C0 && c <= 0x00DE) return c == 0x00D7 ? c : c + 32;
  // Latin Extended-A: upper/lower pairs, upper case on even or odd code
  // points depending on the block.
  if (c == 0x0130) return 'i';
  if (c == 0x0178) return 0x00FF;
  if ((c >= 0x0100 && c <= 0x012F) || (c >= 0x0132 && c <= 0x0137) ||
      (c >= 0x014A && c <= 0x0177)) {
    return (c % 2 == 0) ? c + 1 : c;
  }
  if ((c >= 0x0139 && c <= 0x0148) || (c >= 0x0179 && c <= 0x017E)) {
    return (c % 2 == 1) ? c + 1 : c;
  }
  // Greek.
  if (c == 0x0386) return 0x03AC;
  if (c >= 0x0388 && c <= 0x038A) return c + 37;
  if (c == 0x038C) return 0x03CC;
  if (c == 0x038E || c == 0x038F) return c + 63;
  if ((c >= 0x0391 && c <= 0x03A1) || (c >= 0x03A3 && c <= 0x03AB)) {
    return c + 32;
  }
  // Cyrillic.
  if (c >= 0x0400 && c <= 0x040F) return c + 80;
  if (c >= 0x0410 && c <= 0x042F) return c + 32;
  if (c == 0x04C0) return 0x04CF;
  if ((c >= 0x0460 && c <= 0x0481) || (c >= 0x048A && c <= 0x04BF) ||
      (c >= 0x04D0 && c <= 0x052F)) {
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x04C1 && c <= 0x04CE) return (c % 2 == 1) ? c + 1 : c;
  // Full-width Latin.
  if (c >= 0xFF21 && c <= 0xFF3A) return c + 32;
  return c;
}

}  // namespace fanyi
