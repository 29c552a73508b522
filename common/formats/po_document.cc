#include "common/formats/po_document.h"

#include <cstdio>
#include <stdexcept>
#include <utility>

#include "common/formats/po_reader.h"

namespace fanyi {
namespace {

bool Untranslated(const CatalogEntry& entry) {
  for (const std::string& translation : entry.translations) {
    if (!translation.empty()) return false;
  }
  return true;
}

// "\r\n", "\n" or "" (the file's last line): how the line before `end`
// ends.
std::string LineEnding(const std::string& source, std::size_t end) {
  if (end >= 2 && source.compare(end - 2, 2, "\r\n") == 0) return "\r\n";
  if (end >= 1 && source[end - 1] == '\n') return "\n";
  return "";
}

// One line's worth of `text` escaped, between quotes.
std::string Quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\v':
        out += "\\v";
        break;
      case '\0':
        break;  // It would end the string in a .mo file.
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          char octal[5];
          std::snprintf(octal, sizeof octal, "\\%03o",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += octal;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace

std::string PoString(const std::string& text, const std::string& newline) {
  const std::size_t inner = text.find('\n');
  if (inner == std::string::npos || inner + 1 == text.size()) {
    return Quoted(text);
  }
  std::string out = "\"\"";
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    end = end == std::string::npos ? text.size() : end + 1;
    out += newline + Quoted(std::string_view(text).substr(begin, end - begin));
    begin = end;
  }
  return out;
}

PoDocument::PoDocument(std::string po)
    : source_(std::move(po)), catalog_(ReadPo(source_)) {
  if (!catalog_.charset.empty() && !CharsetIsUtf8(catalog_.charset)) {
    throw std::invalid_argument(
        "the .po file is in " + catalog_.charset +
        "; send it in UTF-8 (msgconv -t UTF-8 converts it)");
  }
  for (std::size_t i = 0; i < catalog_.entries.size(); ++i) {
    const CatalogEntry& entry = catalog_.entries[i];
    if ((entry.source.empty() && !entry.has_context) || entry.obsolete ||
        !Untranslated(entry) ||
        entry.translation_extents.size() != entry.translations.size()) {
      continue;
    }
    for (std::size_t form = 0; form < entry.translations.size(); ++form) {
      const bool plural =
          entry.has_plural && (form > 0 || entry.translations.size() == 1);
      const std::string& text = plural ? entry.source_plural : entry.source;
      if (text.empty()) continue;  // msgctxt "c" msgid "": nothing to say.
      texts_.push_back(text);
      slots_.push_back({i, form});
    }
  }
  const std::size_t first_break = source_.find('\n');
  newline_ = first_break != std::string::npos && first_break > 0 &&
                     source_[first_break - 1] == '\r'
                 ? "\r\n"
                 : "\n";
  if (texts_.empty()) {
    throw std::invalid_argument(
        "the .po file has no untranslated message to translate");
  }
}

std::string PoDocument::Write(
    const std::vector<std::string>& translations) const {
  if (translations.size() != texts_.size()) {
    throw std::invalid_argument(
        "PoDocument::Write: " + std::to_string(translations.size()) +
        " translations for " + std::to_string(texts_.size()) + " texts");
  }
  // The edits, in file order: [begin, end) of the source becomes `text`.
  struct Edit {
    std::size_t begin;
    std::size_t end;
    std::string text;
  };
  std::vector<Edit> edits;
  for (std::size_t k = 0; k < slots_.size();) {
    const std::size_t index = slots_[k].entry;
    const CatalogEntry& entry = catalog_.entries[index];
    std::size_t last = k;
    bool any = false;
    while (last < slots_.size() && slots_[last].entry == index) {
      any = any || !translations[last].empty();
      ++last;
    }
    if (any && !entry.fuzzy) {
      const std::string newline = [&] {
        const std::string ending =
            LineEnding(source_, entry.translation_extents.front().end);
        return ending.empty() ? newline_ : ending;
      }();
      if (entry.flags.empty()) {
        edits.push_back({entry.flags_insert_at, entry.flags_insert_at,
                         "#, fuzzy" + newline});
      } else {
        // "#, c-format" becomes "#, fuzzy, c-format", as msgmerge writes.
        const std::string line = source_.substr(
            entry.flags.begin, entry.flags.end - entry.flags.begin);
        const std::size_t mark = line.find("#,");
        edits.push_back(
            {entry.flags.begin, entry.flags.end,
             line.substr(0, mark) + "#, fuzzy," + line.substr(mark + 2)});
      }
    }
    for (; k < last; ++k) {
      if (!any || translations[k].empty()) continue;
      const std::size_t form = slots_[k].form;
      const CatalogEntry::Extent extent = entry.translation_extents[form];
      const std::string ending = LineEnding(source_, extent.end);
      const std::string keyword = entry.has_plural
                                      ? "msgstr[" + std::to_string(form) + "] "
                                      : "msgstr ";
      edits.push_back(
          {extent.begin, extent.end,
           keyword +
               PoString(translations[k], ending.empty() ? newline_ : ending) +
               ending});
    }
  }
  std::string out;
  out.reserve(source_.size() + source_.size() / 2);
  std::size_t at = 0;
  for (const Edit& edit : edits) {
    out.append(source_, at, edit.begin - at);
    out += edit.text;
    at = edit.end;
  }
  out.append(source_, at, std::string::npos);
  return out;
}

}  // namespace fanyi
