// A gettext .po file to fill in: its untranslated messages translated, the
// rest of the file kept byte for byte.
#ifndef FANYI_COMMON_FORMATS_PO_DOCUMENT_H_
#define FANYI_COMMON_FORMATS_PO_DOCUMENT_H_

#include <cstddef>
#include <string>
#include <vector>

#include "common/formats/gettext_catalog.h"

namespace fanyi {

// Reads a UTF-8 .po file (ReadPo) and finds what to translate: each
// message that is neither the header nor obsolete and has no translation
// yet. A message gives one text; a plural message one per msgstr[N] line
// it has (translators' tools write as many as the language's forms):
// msgstr[0] the msgid, the others the msgid_plural, and a language of one
// form (msgstr[0] alone, as Chinese) the msgid_plural, which reads for
// every count ("%d files"). Write puts the translations in place of the
// empty msgstrs and marks each message it filled fuzzy ("#, fuzzy" added,
// or "fuzzy" put first in the message's "#," line), as Weblate and
// msgmerge expect machine suggestions to be; the header, comments,
// contexts, translated messages and their line wrapping stay as they
// were. Thread-safe once built (const).
class PoDocument {
 public:
  // Throws std::invalid_argument for what ReadPo refuses, for a file in
  // another charset than UTF-8 (msgconv -t UTF-8 converts it), and for a
  // file with no message to translate.
  explicit PoDocument(std::string po);

  // The language its header names ("zh_CN"), or "".
  const std::string& language() const { return catalog_.language; }

  // What to translate, in file order.
  const std::vector<std::string>& texts() const { return texts_; }

  // The file with texts()[k]'s translation in its place. A message whose
  // translations are all empty stays untranslated. Throws
  // std::invalid_argument when the count differs.
  std::string Write(const std::vector<std::string>& translations) const;

 private:
  // Where texts_[k] goes: a msgstr of a message.
  struct Slot {
    std::size_t entry = 0;  // Index into catalog_.entries.
    std::size_t form = 0;   // Its msgstr, or msgstr[form].
  };

  std::string source_;
  std::string newline_;  // "\n", or "\r\n" when the file's lines end so.
  GettextCatalog catalog_;
  std::vector<std::string> texts_;
  std::vector<Slot> slots_;
};

// `text` as a .po string: quoted, escaped as msgfmt reads it, and cut after
// each "\n" inside it into lines of their own after an empty first string,
// as gettext's tools write multi-line messages. `newline` ends each line.
std::string PoString(const std::string& text, const std::string& newline);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_PO_DOCUMENT_H_
