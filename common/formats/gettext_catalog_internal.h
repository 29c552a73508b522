// What the .po reader (po_reader.h) and the .mo reader (mo_reader.h) share:
// the charset a catalog's header names, the conversion to UTF-8, and
// the checks both make. Defined in gettext_catalog.cc.
#ifndef FANYI_COMMON_FORMATS_GETTEXT_CATALOG_INTERNAL_H_
#define FANYI_COMMON_FORMATS_GETTEXT_CATALOG_INTERNAL_H_

#include <unicode/ucnv.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "common/formats/gettext_catalog.h"

namespace fanyi {
namespace gettext_internal {

// A space, a tab or a carriage return.
bool IsBlank(char c);

// `text` without blanks (IsBlank) at either end.
std::string_view TrimBlanks(std::string_view text);

// The charset a catalog's header (its first message with an empty msgid
// and no context) names in its Content-Type ("text/plain; charset=UTF-8"),
// or "".
std::string CatalogCharset(const GettextCatalog& catalog);

// Converts text in a charset to UTF-8 with one ICU converter (bytes the
// charset does not define become U+FFFD, or the C1 control ICU's table
// maps them to).
class Utf8Converter {
 public:
  // Throws std::invalid_argument for a charset ICU does not know.
  explicit Utf8Converter(const std::string& charset);
  ~Utf8Converter();
  Utf8Converter(const Utf8Converter&) = delete;
  Utf8Converter& operator=(const Utf8Converter&) = delete;

  // `text` in UTF-8; throws std::invalid_argument when ICU fails.
  std::string operator()(std::string_view text) const;

 private:
  std::string charset_;
  UConverter* converter_ = nullptr;
};

// Throws std::invalid_argument for a catalog of more than kMaxCatalogBytes.
void CheckSize(std::size_t size);

// A read catalog's last steps: checks every string is UTF-8 (naming the
// message that is not), and sets its language from its header (when it has
// one) and its `charset`.
void Finish(GettextCatalog& catalog, const std::string& charset);

}  // namespace gettext_internal
}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_GETTEXT_CATALOG_INTERNAL_H_
