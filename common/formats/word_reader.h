#ifndef FANYI_COMMON_FORMATS_WORD_READER_H_
#define FANYI_COMMON_FORMATS_WORD_READER_H_

#include <string>

#include "common/formats/marked_document.h"

namespace fanyi {

// Reads a WordprocessingML part of a .docx (word/document.xml, a header,
// a footer, the footnotes) into the texts to translate: each paragraph's
// runs are one text, in the formatting most of its words have; runs in
// other formatting, hyperlinks and fields ride through the model as inline
// markers, written back around the translation of their own words, so that
// a bold word stays bold. Everything else (paragraph and run properties,
// tables, drawings, bookmarks, runs holding tabs or breaks) is kept byte
// for byte; spell-check marks inside a paragraph are dropped. Throws
// std::invalid_argument for XML that is not well-formed, or beyond
// XmlTree's limits: elements nested more than `max_depth` deep, too many
// nodes.
MarkedDocument ReadWordXml(std::string xml,
                           int max_depth = kDefaultMaxDocumentDepth);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_WORD_READER_H_
