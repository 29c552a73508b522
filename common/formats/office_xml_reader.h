#ifndef FANYI_COMMON_FORMATS_OFFICE_XML_READER_H_
#define FANYI_COMMON_FORMATS_OFFICE_XML_READER_H_

#include <string>

#include "common/formats/marked_document.h"

namespace fanyi {

// Reads an XML part of an office document into the texts to translate: a
// .docx's WordprocessingML (the document, a header, the footnotes), a
// .pptx's slides and notes (DrawingML), an .odt's or .odp's content and
// styles (OpenDocument). Each paragraph's words are one text, in the
// formatting most of its words have; words in other formatting,
// hyperlinks, fields and breaks ride through the model as inline markers,
// written back around the translation of their own words, so that a bold
// word stays bold. Everything else (paragraph and run properties, tables,
// drawings, bookmarks) is kept byte for byte; spell-check marks inside a
// paragraph are dropped. Throws std::invalid_argument for XML that is not
// well-formed, or beyond XmlTree's limits: elements nested more than
// `max_depth` deep, too many nodes.
MarkedDocument ReadOfficeXml(std::string xml,
                             int max_depth = kDefaultMaxDocumentDepth);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_OFFICE_XML_READER_H_
