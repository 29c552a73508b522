#ifndef FANYI_COMMON_FORMATS_SRT_READER_H_
#define FANYI_COMMON_FORMATS_SRT_READER_H_

#include <string>

#include "common/formats/marked_document.h"

namespace fanyi {

// Reads SubRip subtitles (.srt) into the texts to translate: each cue's
// lines after its timing line ("00:00:01,000 --> 00:00:04,000") are one
// text, written back as one line. Cue numbers, timings, blank lines and line
// endings are kept byte for byte, and so are the formatting tags a cue
// begins or ends with (<i>, </i>, {\an8}); tags inside it ride through the
// model as inline markers. Throws std::invalid_argument when `srt` has no
// timing line, or is not valid UTF-8.
MarkedDocument ReadSrt(std::string srt);

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_SRT_READER_H_
