#ifndef FANYI_COMMON_FORMATS_MARKDOWN_READER_H_
#define FANYI_COMMON_FORMATS_MARKDOWN_READER_H_

#include <string>

#include "common/formats/marked_document.h"

namespace fanyi {

// Reads Markdown (CommonMark and GitHub's tables) into the texts to
// translate: each paragraph (its lines joined, written back as one line),
// heading, list item, quoted line and table cell is a text. Kept byte for
// byte: fenced and indented code blocks, front matter, HTML blocks, link
// reference definitions, thematic breaks, table rules, and every block's
// markers (#, >, -, 1.). Inside a text, code spans, autolinks and inline
// HTML ride through the model as inline markers, untouched; links, images
// and emphasis are markers too, written back around the translation of
// the words they wrapped, their targets untouched. Never fails on valid
// UTF-8; throws std::invalid_argument otherwise.
MarkedDocument ReadMarkdown(std::string markdown);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_MARKDOWN_READER_H_
