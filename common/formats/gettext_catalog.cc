#include "common/formats/gettext_catalog.h"

#include <unicode/ucnv.h>
#include <unicode/ustring.h>

#include <cctype>
#include <climits>
#include <stdexcept>
#include <utility>

#include "common/formats/gettext_catalog_internal.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace gettext_internal {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

namespace {

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

}  // namespace

std::string CatalogCharset(const GettextCatalog& catalog) {
  const CatalogEntry* header = Header(catalog);
  return header != nullptr ? HeaderCharset(header->translations[0]) : "";
}

Utf8Converter::Utf8Converter(const std::string& charset) : charset_(charset) {
  UErrorCode status = U_ZERO_ERROR;
  converter_ = ucnv_open(charset.c_str(), &status);
  if (U_FAILURE(status) || converter_ == nullptr) {
    throw std::invalid_argument("the catalog's charset \"" + charset +
                                "\" is not one ICU knows");
  }
}

Utf8Converter::~Utf8Converter() { ucnv_close(converter_); }

std::string Utf8Converter::operator()(std::string_view text) const {
  if (text.empty()) return {};
  // kMaxCatalogBytes keeps every length within int32_t: a byte becomes
  // at most one UTF-16 unit, and a unit at most 3 UTF-8 bytes.
  static_assert(kMaxCatalogBytes * 3 < std::size_t{INT32_MAX});
  std::u16string units(text.size(), u'\0');
  UErrorCode status = U_ZERO_ERROR;
  ucnv_reset(converter_);
  const int32_t unit_count = ucnv_toUChars(
      converter_, units.data(), static_cast<int32_t>(units.size()), text.data(),
      static_cast<int32_t>(text.size()), &status);
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

void CheckSize(std::size_t size) {
  if (size > kMaxCatalogBytes) {
    throw std::invalid_argument("the catalog has " + std::to_string(size) +
                                " bytes; at most " +
                                std::to_string(kMaxCatalogBytes) + " are read");
  }
}

void Finish(GettextCatalog& catalog, const std::string& charset) {
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
  if (const CatalogEntry* header = Header(catalog)) {
    catalog.language = HeaderField(header->translations[0], "Language");
  }
  catalog.charset = charset;
}

}  // namespace gettext_internal

bool CharsetIsUtf8(const std::string& charset) {
  const std::string lower = AsciiLowercase(charset);
  return lower.empty() || lower == "utf-8" || lower == "utf8" ||
         lower == "ascii" || lower == "us-ascii" || lower == "charset";
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
