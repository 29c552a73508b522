#ifndef FANYI_COMMON_FORMATS_PO_READER_H_
#define FANYI_COMMON_FORMATS_PO_READER_H_

#include <string_view>

#include "common/formats/gettext_catalog.h"

namespace fanyi {

// Reads a .po file in the charset its header's Content-Type names (UTF-8
// when none; others through ICU: the file is read twice). One pass over
// the lines, no recursion. Throws std::invalid_argument naming the line for
// what gettext's msgfmt refuses too: a keyword out of place, a comment
// inside a message, #~ on some of a message's lines, a bad string or
// escape, plural forms out of order; and for plural forms over
// kMaxPluralForms, a charset ICU does not know, and a \0 escape (which
// msgfmt would cut the string at).
GettextCatalog ReadPo(std::string_view po);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_PO_READER_H_
