#include "common/formats/gettext_catalog.h"

#include <unicode/ucnv.h>
#include <unicode/ustring.h>

#include <cctype>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

// The value of header field `field` ("Content-Type", "Language") in a
// catalog's header (its msgid "" message's msgstr), or "".
std::string HeaderField(std::string_view header, std::string_view field) {
  std::size_t begin = 0;
  while (begin < header.size()) {
    std::size_t end = header.find('\n', begin);
    if (end == std::string_view::npos) end = header.size();
    const std::string_view line = header.substr(begin, end - begin);
    if (line.size() > field.size() && line[field.size()] == ':' &&
        AsciiLowercase(line.substr(0, field.size())) == AsciiLowercase(field)) {
      return std::string(TrimBlanks(line.substr(field.size() + 1)));
    }
    begin = end + 1;
  }
  return "";
}

// The charset a header's Content-Type names ("text/plain;
// charset=UTF-8"), or "".
std::string HeaderCharset(std::string_view header) {
  const std::string type = HeaderField(header, "Content-Type");
  const std::size_t at = type.find("charset=");
  if (at == std::string::npos) return "";
  std::size_t end = at + 8;
  while (end < type.size() &&
         (std::isalnum(static_cast<unsigned char>(type[end])) ||
          type[end] == '-' || type[end] == '_' || type[end] == '.' ||
          type[end] == ':')) {
    ++end;
  }
  return type.substr(at + 8, end - at - 8);
}

// The header of a catalog: its first message with an empty msgid and no
// context.
const CatalogEntry* Header(const GettextCatalog& catalog) {
  for (const CatalogEntry& entry : catalog.entries) {
    if (entry.source.empty() && !entry.has_context && !entry.obsolete &&
        !entry.translations.empty()) {
      return &entry;
    }
  }
  return nullptr;
}

// Converts text in a charset to UTF-8 with one ICU converter (bytes the
// charset does not define become U+FFFD, or the C1 control ICU's table
// maps them to).
class Utf8Converter {
 public:
  // Throws std::invalid_argument for a charset ICU does not know.
  explicit Utf8Converter(const std::string& charset) : charset_(charset) {
    UErrorCode status = U_ZERO_ERROR;
    converter_ = ucnv_open(charset.c_str(), &status);
    if (U_FAILURE(status) || converter_ == nullptr) {
      throw std::invalid_argument("the catalog's charset \"" + charset +
                                  "\" is not one ICU knows");
    }
  }
  ~Utf8Converter() { ucnv_close(converter_); }
  Utf8Converter(const Utf8Converter&) = delete;
  Utf8Converter& operator=(const Utf8Converter&) = delete;

  std::string operator()(std::string_view text) const {
    if (text.empty()) return {};
    // kMaxCatalogBytes keeps every length within int32_t: a byte becomes
    // at most one UTF-16 unit, and a unit at most 3 UTF-8 bytes.
    static_assert(kMaxCatalogBytes * 3 < std::size_t{INT32_MAX});
    std::u16string units(text.size(), u'\0');
    UErrorCode status = U_ZERO_ERROR;
    ucnv_reset(converter_);
    const int32_t unit_count = ucnv_toUChars(
        converter_, units.data(), static_cast<int32_t>(units.size()),
        text.data(), static_cast<int32_t>(text.size()), &status);
    std::string converted(static_cast<std::size_t>(unit_count) * 3, '\0');
    int32_t length = 0;
    if (U_SUCCESS(status) || status == U_STRING_NOT_TERMINATED_WARNING) {
      status = U_ZERO_ERROR;
      u_strToUTF8(converted.data(), static_cast<int32_t>(converted.size()),
                  &length, units.data(), unit_count, &status);
    }
    if (U_FAILURE(status) && status != U_STRING_NOT_TERMINATED_WARNING) {
      throw std::invalid_argument("converting the catalog from " + charset_ +
                                  " failed: " + u_errorName(status));
    }
    converted.resize(static_cast<std::size_t>(length));
    return converted;
  }

 private:
  std::string charset_;
  UConverter* converter_ = nullptr;
};

void CheckSize(std::size_t size) {
  if (size > kMaxCatalogBytes) {
    throw std::invalid_argument("the catalog has " + std::to_string(size) +
                                " bytes; at most " +
                                std::to_string(kMaxCatalogBytes) + " are read");
  }
}

// Appends the C string literal at text[i] (its opening quote) to `out`,
// its escapes read; returns where it ends (after the closing quote).
std::size_t ReadQuoted(std::string_view text, std::size_t i, std::string* out) {
  if (i >= text.size() || text[i] != '"') {
    throw std::invalid_argument("a string must begin with '\"'");
  }
  for (++i; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') return i + 1;
    if (c != '\\') {
      out->push_back(c);
      continue;
    }
    if (++i >= text.size()) break;
    const char e = text[i];
    const char* const kSimple = "ntrabfv\\\"";
    const char* const kMeant = "\n\t\r\a\b\f\v\\\"";
    if (const char* found = std::strchr(kSimple, e); found && e != '\0') {
      out->push_back(kMeant[found - kSimple]);
    } else if (e >= '0' && e <= '7') {
      int value = 0;
      int digits = 0;
      while (digits < 3 && i < text.size() && text[i] >= '0' &&
             text[i] <= '7') {
        value = value * 8 + (text[i] - '0');
        ++i;
        ++digits;
      }
      --i;
      if ((value & 0xFF) == 0) {
        throw std::invalid_argument(
            "a \\0 escape, which would end the string in a .mo file");
      }
      out->push_back(static_cast<char>(value & 0xFF));
    } else if (e == 'x') {
      // As C and gettext read it: every hex digit that follows.
      int value = 0;
      int digits = 0;
      while (i + 1 < text.size() &&
             std::isxdigit(static_cast<unsigned char>(text[i + 1]))) {
        const char h = text[++i];
        value = std::min(
            256, value * 16 + (std::isdigit(static_cast<unsigned char>(h))
                                   ? h - '0'
                                   : (h | 0x20) - 'a' + 10));
        ++digits;
      }
      if (digits == 0) throw std::invalid_argument("\\x without hex digits");
      if (value > 0xFF) {
        throw std::invalid_argument("a \\x escape above \\xFF");
      }
      if (value == 0) {
        throw std::invalid_argument(
            "a \\x00 escape, which would end the string in a .mo file");
      }
      out->push_back(static_cast<char>(value));
    } else {
      throw std::invalid_argument(std::string("unknown escape \\") + e);
    }
  }
  throw std::invalid_argument("a string without its closing '\"'");
}

// Reads a .po file's lines into entries: a small state machine, one line
// at a time.
class PoParser {
 public:
  // Byte offsets count from the start of `po`, a byte order mark in.
  GettextCatalog Parse(std::string_view po) {
    std::size_t begin = po.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
    while (begin < po.size()) {
      std::size_t end = po.find('\n', begin);
      if (end == std::string_view::npos) end = po.size();
      ++line_number_;
      line_begin_ = begin;
      line_end_ = std::min(end + 1, po.size());
      try {
        Line(TrimBlanks(po.substr(begin, end - begin)));
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("line " + std::to_string(line_number_) +
                                    ": " + e.what());
      }
      begin = end + 1;
    }
    Finish();
    return std::move(catalog_);
  }

 private:
  void Line(std::string_view line) {
    if (line.empty()) return;
    bool obsolete = false;
    if (line.substr(0, 2) == "#~") {
      line = TrimBlanks(line.substr(2));
      if (line.empty() || line.front() == '|') return;  // Previous msgid.
      obsolete = true;
    } else if (line.front() == '#') {
      if (entry_.open && !entry_.has_msgstr) {
        throw std::invalid_argument("a comment inside a message");
      }
      Complete();  // A comment after a message begins the next one.
      if (line.substr(0, 2) == "#,") {
        Flags(line.substr(2));
        pending_flags_ = {line_begin_, line_end_};
      } else if (line.substr(0, 2) == "#|" && pending_previous_ == kNone) {
        pending_previous_ = line_begin_;
      }
      return;
    }
    // Every line of a message is obsolete (#~), or none.
    if (entry_.open && entry_.entry.obsolete != obsolete &&
        !(entry_.has_msgstr &&
          (line.substr(0, 5) == "msgid" || line.substr(0, 7) == "msgctxt"))) {
      throw std::invalid_argument("inconsistent use of #~ in a message");
    }
    if (line.front() == '"') {
      if (field_ == nullptr) {
        throw std::invalid_argument("a string continues no keyword");
      }
      Rest(line, 0, field_);
      if (entry_.has_msgstr)
        entry_.entry.translation_extents.back().end = line_end_;
      return;
    }
    std::size_t keyword_end = 0;
    while (keyword_end < line.size() && !IsBlank(line[keyword_end]) &&
           line[keyword_end] != '"') {
      ++keyword_end;
    }
    const std::string_view keyword = line.substr(0, keyword_end);
    if (keyword == "msgctxt" || keyword == "msgid") {
      if (entry_.has_msgstr || (keyword == "msgctxt" && entry_.has_msgid)) {
        Complete();
      }
      if (entry_.has_msgid) {
        throw std::invalid_argument("msgid follows a msgid with no msgstr");
      }
      Open(obsolete);
      if (keyword == "msgctxt") {
        if (entry_.entry.has_context) {
          throw std::invalid_argument("a second msgctxt");
        }
        entry_.entry.has_context = true;
        field_ = &entry_.entry.context;
      } else {
        entry_.has_msgid = true;
        field_ = &entry_.entry.source;
      }
    } else if (keyword == "msgid_plural") {
      if (!entry_.has_msgid || entry_.has_msgstr || entry_.entry.has_plural) {
        throw std::invalid_argument("msgid_plural out of place");
      }
      entry_.entry.has_plural = true;
      field_ = &entry_.entry.source_plural;
    } else if (keyword == "msgstr") {
      if (!entry_.has_msgid || entry_.has_msgstr || entry_.entry.has_plural) {
        throw std::invalid_argument(entry_.entry.has_plural
                                        ? "a plural message needs msgstr[N]"
                                        : "msgstr out of place");
      }
      entry_.has_msgstr = true;
      field_ = &entry_.entry.translations.emplace_back();
      entry_.entry.translation_extents.push_back({line_begin_, line_end_});
    } else if (keyword.substr(0, 7) == "msgstr[") {
      PluralForm(keyword);
      entry_.entry.translation_extents.push_back({line_begin_, line_end_});
    } else {
      throw std::invalid_argument("unknown keyword \"" +
                                  std::string(keyword.substr(0, 32)) + "\"");
    }
    Rest(line, keyword_end, field_);
  }

  // msgstr[N]: the forms in order from 0.
  void PluralForm(std::string_view keyword) {
    if (!entry_.has_msgid || !entry_.entry.has_plural) {
      throw std::invalid_argument("msgstr[N] without msgid_plural");
    }
    const std::string expected =
        "msgstr[" + std::to_string(entry_.entry.translations.size()) + "]";
    if (keyword != expected) {
      throw std::invalid_argument("expected " + expected + ", not \"" +
                                  std::string(keyword.substr(0, 32)) + "\"");
    }
    if (entry_.entry.translations.size() >=
        static_cast<std::size_t>(kMaxPluralForms)) {
      throw std::invalid_argument(
          "more than " + std::to_string(kMaxPluralForms) + " plural forms");
    }
    entry_.has_msgstr = true;
    field_ = &entry_.entry.translations.emplace_back();
  }

  // The string after a keyword (or a continuation line), then nothing but
  // blanks.
  void Rest(std::string_view line, std::size_t at, std::string* field) {
    while (at < line.size() && IsBlank(line[at])) ++at;
    const std::size_t end = ReadQuoted(line, at, field);
    if (!TrimBlanks(line.substr(end)).empty()) {
      throw std::invalid_argument("text after a string's closing '\"'");
    }
  }

  void Flags(std::string_view flags) {
    std::size_t begin = 0;
    while (begin <= flags.size()) {
      std::size_t end = flags.find(',', begin);
      if (end == std::string_view::npos) end = flags.size();
      if (TrimBlanks(flags.substr(begin, end - begin)) == "fuzzy") {
        pending_fuzzy_ = true;
      }
      begin = end + 1;
    }
  }

  void Open(bool obsolete) {
    if (entry_.open) return;
    entry_.open = true;
    entry_.entry.line_number = line_number_;
    // msgfmt wants "#," before "#|" lines (previous msgids).
    entry_.entry.flags_insert_at =
        pending_previous_ != kNone ? pending_previous_ : line_begin_;
    entry_.entry.flags = pending_flags_;
    pending_flags_ = {};
    pending_previous_ = kNone;
    entry_.entry.obsolete = obsolete;
    entry_.entry.fuzzy = pending_fuzzy_;
    pending_fuzzy_ = false;
  }

  // Ends the message read so far, if it has its msgstr.
  void Complete() {
    field_ = nullptr;
    if (!entry_.has_msgstr) return;
    catalog_.entries.push_back(std::move(entry_.entry));
    entry_ = {};
  }

  void Finish() {
    if (entry_.open && !entry_.has_msgstr) {
      throw std::invalid_argument("line " +
                                  std::to_string(entry_.entry.line_number) +
                                  ": the message has no msgstr");
    }
    Complete();
  }

  struct Building {
    CatalogEntry entry;
    bool open = false;
    bool has_msgid = false;
    bool has_msgstr = false;
  };
  GettextCatalog catalog_;
  Building entry_;
  std::string* field_ = nullptr;  // What a continuation line appends to.
  bool pending_fuzzy_ = false;
  CatalogEntry::Extent pending_flags_;  // Of a "#," line before a message.
  static constexpr std::size_t kNone = std::size_t(-1);
  std::size_t pending_previous_ = kNone;  // Its first "#|" line.
  int64_t line_number_ = 0;
  std::size_t line_begin_ = 0;  // The line being read, its line break in.
  std::size_t line_end_ = 0;
};

// Checks every string of `catalog` is UTF-8, naming the message that is not.
void CheckUtf8(const GettextCatalog& catalog) {
  for (const CatalogEntry& entry : catalog.entries) {
    try {
      DecodeUtf8(entry.context);
      DecodeUtf8(entry.source);
      DecodeUtf8(entry.source_plural);
      for (const std::string& translation : entry.translations) {
        DecodeUtf8(translation);
      }
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(
          (entry.line_number > 0
               ? "the message at line " + std::to_string(entry.line_number)
               : "a message") +
          ": " + e.what());
    }
  }
}

// The .mo file's 32-bit word at `at`, in its byte order.
uint32_t Word(std::string_view mo, std::size_t at, bool swapped) {
  if (at + 4 > mo.size()) {
    throw std::invalid_argument("the .mo file ends inside its tables");
  }
  const auto byte = [&mo, at](int k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(mo[at + k]));
  };
  return swapped ? byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3)
                 : byte(3) << 24 | byte(2) << 16 | byte(1) << 8 | byte(0);
}

// The `index`-th string of the table at `table`.
std::string_view MoString(std::string_view mo, uint32_t table, uint32_t index,
                          bool swapped) {
  const uint64_t at = uint64_t{table} + uint64_t{index} * 8;
  if (at + 8 > mo.size()) {
    throw std::invalid_argument("the .mo file ends inside its tables");
  }
  const uint32_t length = Word(mo, at, swapped);
  const uint32_t offset = Word(mo, at + 4, swapped);
  if (uint64_t{offset} + length > mo.size()) {
    throw std::invalid_argument("a .mo string lies outside the file");
  }
  return mo.substr(offset, length);
}

// `text` cut at each NUL.
std::vector<std::string> SplitAtNul(std::string_view text) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = text.find('\0', begin);
    parts.emplace_back(text.substr(begin, end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

}  // namespace

bool CharsetIsUtf8(const std::string& charset) {
  const std::string lower = AsciiLowercase(charset);
  return lower.empty() || lower == "utf-8" || lower == "utf8" ||
         lower == "ascii" || lower == "us-ascii" || lower == "charset";
}

GettextCatalog ReadPo(std::string_view po) {
  CheckSize(po.size());
  // The header names the charset, and is ASCII in any charset: read as
  // bytes first, the file is converted and read again when it is not UTF-8.
  GettextCatalog catalog = PoParser().Parse(po);
  const CatalogEntry* header = Header(catalog);
  const std::string charset =
      header != nullptr ? HeaderCharset(header->translations[0]) : "";
  if (!CharsetIsUtf8(charset)) {
    catalog = PoParser().Parse(Utf8Converter(charset)(po));
    header = Header(catalog);
  }
  CheckUtf8(catalog);
  if (header != nullptr) {
    catalog.language = HeaderField(header->translations[0], "Language");
  }
  catalog.charset = charset;
  return catalog;
}

GettextCatalog ReadMo(std::string_view mo) {
  CheckSize(mo.size());
  if (mo.size() < 28) throw std::invalid_argument("not a .mo file: too short");
  const uint32_t magic = Word(mo, 0, false);
  if (magic != 0x950412DE && magic != 0xDE120495) {
    throw std::invalid_argument("not a .mo file: no magic number");
  }
  const bool swapped = magic == 0xDE120495;
  if (Word(mo, 4, swapped) >> 16 > 1) {
    throw std::invalid_argument("a .mo file of an unknown revision");
  }
  const uint32_t count = Word(mo, 8, swapped);
  const uint32_t originals = Word(mo, 12, swapped);
  const uint32_t translations = Word(mo, 16, swapped);
  // Two table entries of 8 bytes a message; and the strings, which msgfmt
  // writes once each, fit in the file: strings that many entries share
  // would be copied for each.
  if (uint64_t{count} * 16 > mo.size() - 28) {
    throw std::invalid_argument("a .mo file with more messages than room");
  }
  uint64_t string_bytes = 0;
  for (uint32_t i = 0; i < count; ++i) {
    string_bytes += MoString(mo, originals, i, swapped).size() +
                    MoString(mo, translations, i, swapped).size();
  }
  if (string_bytes > mo.size()) {
    throw std::invalid_argument(
        "a .mo file whose strings overlap: they add up to more than the file");
  }
  GettextCatalog catalog;
  catalog.entries.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::string_view id = MoString(mo, originals, i, swapped);
    std::vector<std::string> strs =
        SplitAtNul(MoString(mo, translations, i, swapped));
    if (strs.size() > static_cast<std::size_t>(kMaxPluralForms)) {
      throw std::invalid_argument("a .mo message with more than " +
                                  std::to_string(kMaxPluralForms) +
                                  " plural forms");
    }
    CatalogEntry entry;
    if (const std::size_t eot = id.find('\x04');
        eot != std::string_view::npos) {
      entry.has_context = true;
      entry.context = std::string(id.substr(0, eot));
      id.remove_prefix(eot + 1);
    }
    std::vector<std::string> ids = SplitAtNul(id);
    entry.source = std::move(ids[0]);
    if (ids.size() > 1) {
      entry.has_plural = true;
      entry.source_plural = std::move(ids[1]);
    }
    entry.translations = std::move(strs);
    catalog.entries.push_back(std::move(entry));
  }
  const CatalogEntry* header = Header(catalog);
  const std::string charset =
      header != nullptr ? HeaderCharset(header->translations[0]) : "";
  if (!CharsetIsUtf8(charset)) {
    const Utf8Converter convert(charset);
    for (CatalogEntry& entry : catalog.entries) {
      entry.context = convert(entry.context);
      entry.source = convert(entry.source);
      entry.source_plural = convert(entry.source_plural);
      for (std::string& translation : entry.translations) {
        translation = convert(translation);
      }
    }
  }
  CheckUtf8(catalog);
  if (header != nullptr) {
    catalog.language = HeaderField(header->translations[0], "Language");
  }
  catalog.charset = charset;
  return catalog;
}

std::vector<CatalogPair> TrainingPairs(const GettextCatalog& catalog) {
  std::vector<CatalogPair> pairs;
  const auto add = [&pairs](std::string_view source, std::string_view target) {
    CatalogPair pair{SqueezedWhitespace(source), SqueezedWhitespace(target)};
    if (!pair.source.empty() && !pair.target.empty()) {
      pairs.push_back(std::move(pair));
    }
  };
  for (const CatalogEntry& entry : catalog.entries) {
    if (entry.source.empty() || entry.fuzzy || entry.obsolete ||
        entry.translations.empty()) {
      continue;
    }
    add(entry.source, entry.translations[0]);
    if (entry.has_plural) {
      add(entry.source_plural, entry.translations.size() > 1
                                   ? entry.translations[1]
                                   : entry.translations[0]);
    }
  }
  return pairs;
}

}  // namespace fanyi
