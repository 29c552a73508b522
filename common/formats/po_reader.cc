#include "common/formats/po_reader.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/formats/gettext_catalog_internal.h"

namespace fanyi {
namespace {

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
        Line(gettext_internal::TrimBlanks(po.substr(begin, end - begin)));
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
      line = gettext_internal::TrimBlanks(line.substr(2));
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
    while (keyword_end < line.size() &&
           !gettext_internal::IsBlank(line[keyword_end]) &&
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
    while (at < line.size() && gettext_internal::IsBlank(line[at])) ++at;
    const std::size_t end = ReadQuoted(line, at, field);
    if (!gettext_internal::TrimBlanks(line.substr(end)).empty()) {
      throw std::invalid_argument("text after a string's closing '\"'");
    }
  }

  void Flags(std::string_view flags) {
    std::size_t begin = 0;
    while (begin <= flags.size()) {
      std::size_t end = flags.find(',', begin);
      if (end == std::string_view::npos) end = flags.size();
      if (gettext_internal::TrimBlanks(flags.substr(begin, end - begin)) ==
          "fuzzy") {
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

}  // namespace

GettextCatalog ReadPo(std::string_view po) {
  gettext_internal::CheckSize(po.size());
  // The header names the charset, and is ASCII in any charset: read as
  // bytes first, the file is converted and read again when it is not UTF-8.
  GettextCatalog catalog = PoParser().Parse(po);
  const std::string charset = gettext_internal::CatalogCharset(catalog);
  if (!CharsetIsUtf8(charset)) {
    catalog = PoParser().Parse(gettext_internal::Utf8Converter(charset)(po));
  }
  gettext_internal::Finish(catalog, charset);
  return catalog;
}

}  // namespace fanyi
