#include "common/formats/mo_reader.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/formats/gettext_catalog_internal.h"

namespace fanyi {
namespace {

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

GettextCatalog ReadMo(std::string_view mo) {
  gettext_internal::CheckSize(mo.size());
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
  const std::string charset = gettext_internal::CatalogCharset(catalog);
  if (!CharsetIsUtf8(charset)) {
    const gettext_internal::Utf8Converter convert(charset);
    for (CatalogEntry& entry : catalog.entries) {
      entry.context = convert(entry.context);
      entry.source = convert(entry.source);
      entry.source_plural = convert(entry.source_plural);
      for (std::string& translation : entry.translations) {
        translation = convert(translation);
      }
    }
  }
  gettext_internal::Finish(catalog, charset);
  return catalog;
}

}  // namespace fanyi
