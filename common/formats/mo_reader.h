#ifndef FANYI_COMMON_FORMATS_MO_READER_H_
#define FANYI_COMMON_FORMATS_MO_READER_H_

#include <string_view>

#include "common/formats/gettext_catalog.h"

namespace fanyi {

// Reads a compiled .mo file (either byte order), in the charset its header
// names. Throws std::invalid_argument when it is not one, when a table or
// string lies outside the file, or when its strings add up to more than
// the file (entries sharing bytes, which would be copied for each).
GettextCatalog ReadMo(std::string_view mo);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_MO_READER_H_
