// Gettext catalogs, as read from .po files (the text translators edit;
// po_reader.h) and .mo files (what msgfmt compiles them into, and what
// packages install; mo_reader.h).
#ifndef FANYI_COMMON_FORMATS_GETTEXT_CATALOG_H_
#define FANYI_COMMON_FORMATS_GETTEXT_CATALOG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fanyi {

// One message of a catalog, its strings in UTF-8 with their escapes read
// ("\n" is a line break).
struct CatalogEntry {
  bool has_context = false;
  std::string context;  // msgctxt.
  std::string source;   // msgid; empty for the header.
  bool has_plural = false;
  std::string source_plural;  // msgid_plural.
  // msgstr, or msgstr[0], msgstr[1], ... for a plural message; empty
  // strings where untranslated.
  std::vector<std::string> translations;
  bool fuzzy = false;       // "#, fuzzy": a translation to check.
  bool obsolete = false;    // "#~": kept for reuse, no longer in the program.
  int64_t line_number = 0;  // Of its first keyword (.po); 0 in a .mo file.

  // Where it is in a .po file (empty in a .mo file), in bytes; lines with
  // their line breaks.
  struct Extent {
    std::size_t begin = 0;
    std::size_t end = 0;
    bool empty() const { return begin == end; }
  };
  Extent flags;  // Its "#," line, if it has one.
  // Where a "#," line would go: before its first "#|" line (a previous
  // msgid), else its msgctxt or msgid line.
  std::size_t flags_insert_at = 0;
  // Each msgstr or msgstr[N] with its continuation lines.
  std::vector<Extent> translation_extents;
};

// A catalog's messages in file order, the header (msgid "") included.
struct GettextCatalog {
  std::vector<CatalogEntry> entries;
  // What its header's Language field says ("zh_CN"); empty when it has
  // none.
  std::string language;
  // The charset its header's Content-Type names (its strings here are
  // UTF-8 whatever it says); empty when it names none.
  std::string charset;
};

// True for the charsets whose text reads as UTF-8 as it is: UTF-8, ASCII,
// and the "CHARSET" of a template no translator has filled in yet.
bool CharsetIsUtf8(const std::string& charset);

// How large a catalog may be and how many plural forms a message may have;
// larger files and messages are refused.
inline constexpr std::size_t kMaxCatalogBytes = std::size_t{256} << 20;
inline constexpr int kMaxPluralForms = 16;

// A parallel pair of a catalog, for training.
struct CatalogPair {
  std::string source;
  std::string target;
};

// What a translator would train on: each translated message that is neither
// fuzzy nor obsolete (nor the header) as (msgid, msgstr), a plural message
// as (msgid, msgstr[0]) and (msgid_plural, msgstr[1], or msgstr[0] for a
// language with one form). Whitespace runs (line breaks and tabs included)
// become one space, and the ends are trimmed; contexts are left out.
std::vector<CatalogPair> TrainingPairs(const GettextCatalog& catalog);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_GETTEXT_CATALOG_H_
