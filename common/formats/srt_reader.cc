#include "common/formats/srt_reader.h"

#include <cctype>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// A line of the file: [begin, end) without its line ending.
struct Line {
  std::size_t begin = 0;
  std::size_t end = 0;
};

std::vector<Line> Lines(const std::string& text) {
  std::vector<Line> lines;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    const std::size_t next =
        end == std::string::npos ? text.size() + 1 : end + 1;
    if (end == std::string::npos) end = text.size();
    if (end > begin && text[end - 1] == '\r') --end;
    lines.push_back({begin, end});
    begin = next;
  }
  return lines;
}

// Where the searches of TagEnd last stopped, for one text asked at growing
// positions: a search's answer still holds while it lies at or after the
// position asked, so a cue's scan stays linear however many '<' it holds.
struct TagSearches {
  static constexpr std::size_t kUnset = std::string_view::npos - 1;
  std::size_t angle = kUnset;  // The next '>' or '\n'.
  std::size_t brace = kUnset;  // The next '}' or '\n'.
};

// The first of `stops` in `text` at or after `from`, or the one `*last`
// holds when it is still that.
std::size_t FindFrom(std::string_view text, std::size_t from,
                     std::string_view stops, std::size_t* last) {
  if (*last != TagSearches::kUnset &&
      (*last == std::string_view::npos || *last >= from)) {
    return *last;
  }
  *last = text.find_first_of(stops, from);
  return *last;
}

// The end of the formatting tag at text[at] (<i>, </font>, {\an8}), or `at`
// when none starts there. Tags do not cross lines. `searches`, when given,
// is shared by calls on the same text at growing positions.
std::size_t TagEnd(std::string_view text, std::size_t at,
                   TagSearches* searches = nullptr) {
  TagSearches fresh;
  if (searches == nullptr) searches = &fresh;
  if (text.compare(at, 2, "{\\") == 0) {
    const std::size_t close = FindFrom(text, at, "}\n", &searches->brace);
    return close != std::string_view::npos && text[close] == '}' ? close + 1
                                                                 : at;
  }
  if (text[at] != '<' || at + 1 >= text.size()) return at;
  const std::size_t name = text[at + 1] == '/' ? at + 2 : at + 1;
  if (name >= text.size() ||
      !std::isalpha(static_cast<unsigned char>(text[name]))) {
    return at;
  }
  const std::size_t close = FindFrom(text, name, ">\n", &searches->angle);
  return close != std::string_view::npos && text[close] == '>' ? close + 1 : at;
}

// Adds one cue's text, [begin, end) of the source, to `document`.
void AddCue(std::size_t begin, std::size_t end, MarkedDocument* document) {
  const std::string_view source = document->source();
  // Tags and spaces at either end stay where they are.
  const std::string_view cue = source.substr(0, end);
  while (begin < end) {
    if (IsSpace(static_cast<unsigned char>(source[begin]))) {
      ++begin;
      continue;
    }
    const std::size_t tag = TagEnd(cue, begin);
    if (tag == begin) break;
    begin = tag;
  }
  while (end > begin) {
    const char last = source[end - 1];
    if (IsSpace(static_cast<unsigned char>(last))) {
      --end;
      continue;
    }
    if (last != '>' && last != '}') break;
    // Within the cue: a search past its start would read back through the
    // file once per cue.
    const std::size_t found =
        source.substr(begin, end - begin).rfind(last == '>' ? '<' : '{');
    if (found == std::string_view::npos) break;
    const std::size_t open = begin + found;
    if (TagEnd(source.substr(0, end), open) != end) break;
    end = open;
  }
  std::u32string text;
  std::vector<int> markers;
  std::size_t words = begin;  // Start of the words not yet added.
  TagSearches searches;
  for (std::size_t at = begin; at < end; ++at) {
    const std::size_t tag = TagEnd(source.substr(0, end), at, &searches);
    if (tag == at || markers.size() == kMaxInlineMarkers) continue;
    text += DecodeWords(source.substr(words, at - words));
    text.push_back(InlineMarker(static_cast<int>(markers.size())));
    markers.push_back(document->AddRegion(at, tag));
    words = tag;
    at = tag - 1;
  }
  text += DecodeWords(source.substr(words, end - words));
  text = CollapseSpaces(text);  // A cue's lines are one line.
  if (HasLetters(text)) {
    document->AddText(0, begin, end, EncodeUtf8(text), std::move(markers),
                      {TextEscape::kNone});
  }
}

}  // namespace

MarkedDocument ReadSrt(std::string srt) {
  DecodeUtf8(srt);  // Throws for invalid UTF-8.
  MarkedDocument document(std::move(srt));
  const std::string& source = document.source();
  const std::vector<Line> lines = Lines(source);
  auto text_of = [&](const Line& line) {
    return std::string_view(source).substr(line.begin, line.end - line.begin);
  };
  int cues = 0;
  for (std::size_t i = 0; i < lines.size();) {
    // A cue: lines up to its timing line, then its text up to a blank line.
    std::size_t timing = i;
    while (timing < lines.size() && !IsBlank(text_of(lines[timing])) &&
           text_of(lines[timing]).find("-->") == std::string_view::npos) {
      ++timing;
    }
    if (timing == lines.size() || IsBlank(text_of(lines[timing]))) {
      i = timing + 1;  // A block with no timing line stays as it is.
      continue;
    }
    ++cues;
    std::size_t last = timing + 1;
    while (last < lines.size() && !IsBlank(text_of(lines[last]))) ++last;
    if (last > timing + 1) {
      AddCue(lines[timing + 1].begin, lines[last - 1].end, &document);
    }
    i = last;
  }
  if (cues == 0) {
    throw std::invalid_argument(
        "no subtitle has a timing line (00:00:01,000 --> 00:00:02,000): not "
        "SubRip subtitles");
  }
  return document;
}

}  // namespace fanyi
