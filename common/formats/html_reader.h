#ifndef FANYI_COMMON_FORMATS_HTML_READER_H_
#define FANYI_COMMON_FORMATS_HTML_READER_H_

#include <string>

#include "common/formats/marked_document.h"

namespace fanyi {

// Reads an HTML document or fragment (a Mastodon post, a page) with Gumbo's
// HTML5 parser into the texts to translate:
// - each run of text across inline elements (a, b, i, em, strong, span,
//   code, img, ...) inside a block is one text; a <br> ends a run. Each
//   inline element is a marker of the run, written back around the
//   translation of the words it wrapped (a text of its own), wherever the
//   translation puts it;
// - the alt, title, placeholder and aria-label attributes are texts;
// - script, style, pre, code, kbd, samp, var, textarea, template, svg and
//   math, elements with translate="no" or class "notranslate", and inline
//   elements whose words are a mention, a hashtag or a URL are kept, as are
//   runs with no letters;
// - everything else (tags, other attributes, entities, comments, the
//   whitespace around runs) is kept byte for byte.
// Text is given to translation with entities decoded and whitespace runs
// made one space; translations are written back escaped. Where the parse
// does not follow the source in order (misnested tags, tables' foster
// parenting), a run ends, so that the source is never reordered.
// Any bytes are some HTML; `html` must be valid UTF-8. Throws
// std::invalid_argument, naming the limit, for a document whose elements
// nest more than `max_depth` deep, or whose parse would take more memory
// than a bound proportional to its size. Linear in the document, its stack
// use bounded by `max_depth`.
MarkedDocument ReadHtml(std::string html,
                        int max_depth = kDefaultMaxDocumentDepth);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_HTML_READER_H_
