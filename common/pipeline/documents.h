// A text read as the document its format says, whatever reads it: the
// pipeline before translating, a file's language detection, and script
// conversion, which needs no model.
#ifndef FANYI_COMMON_PIPELINE_DOCUMENTS_H_
#define FANYI_COMMON_PIPELINE_DOCUMENTS_H_

#include <string>
#include <string_view>

#include "common/formats/marked_document.h"
#include "common/pipeline/text_translation.h"
#include "common/text/script_converter.h"

namespace fanyi {

// Reads `text` as a document in `format` (not plain text) with its
// format's reader, its elements nested at most `max_depth` deep. Throws
// std::invalid_argument when the reader refuses it (HTML that is not
// UTF-8, XML that is not well-formed, ...), std::logic_error for plain
// text.
MarkedDocument ReadDocument(std::string_view text, TextFormat format,
                            int max_depth);

// `text` with its words written by `converter` (Simplified to Traditional
// Chinese, or back): a plain text whole, a document's words only, so that
// its markup, code and what it marks not to translate stay as written.
// Throws std::invalid_argument as ReadDocument does.
std::string ConvertScript(const ScriptConverter& converter,
                          std::string_view text, TextFormat format,
                          int max_depth);

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_DOCUMENTS_H_
