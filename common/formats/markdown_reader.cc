#include "common/formats/markdown_reader.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/formats/markdown_inline.h"
#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::size_t kNone = std::string_view::npos;

// Inline constructs nest at most this deep (a link in emphasis in a
// link...); deeper words are plain text. Bounds the reader's work.
constexpr int kMaxInlineDepth = 8;

// Walks a Markdown document line by line, adding its texts.
class MarkdownReader {
 public:
  explicit MarkdownReader(MarkedDocument* document)
      : document_(*document),
        source_(document->source()),
        inline_scanner_(source_) {}

  void Read();

 private:
  std::string_view Line(std::size_t i) const {
    return source_.substr(lines_[i].first, lines_[i].second - lines_[i].first);
  }
  // The end of the fence that `line` opens or closes (``` or ~~~, three or
  // more, indented at most three spaces), 0 when it is none.
  static std::size_t FenceLength(std::string_view line, char* fence_char);
  static bool IsBlank(std::string_view line);
  // True for a line that starts an HTML block: a comment, a declaration, a
  // block element's tag, or a line that is one tag alone. (A paragraph may
  // start with inline HTML: "<b>Note</b> this" is words.)
  static bool StartsHtmlBlock(std::string_view line);
  static bool IsThematicBreak(std::string_view line);
  static bool IsTableRule(std::string_view line);
  static bool IsReferenceDefinition(std::string_view line);
  // Where a block's content starts after its markers (quotes, a list item,
  // a heading), or `begin` for a plain line; `*heading` when it is a
  // heading, `*list_item` when a list item.
  std::size_t ContentStart(std::size_t begin, std::size_t end, bool* heading,
                           bool* list_item) const;

  // Adds the cells of table row `line` as texts.
  void AddTableRow(std::size_t begin, std::size_t end);
  // Adds the paragraph gathered so far, if any.
  void EndParagraph();
  // Adds [begin, end) as a text of `region` with its inline constructs as
  // markers; or, with no letters outside them, the words of each construct
  // on their own. `depth`: constructs it lies inside.
  void AddInlineText(int region, std::size_t begin, std::size_t end,
                     int depth = 0);

  MarkedDocument& document_;
  const std::string_view source_;
  std::vector<std::pair<std::size_t, std::size_t>> lines_;  // Without "\r\n".
  // The paragraph being gathered: its content's start and end, or kNone.
  std::size_t paragraph_begin_ = kNone;
  std::size_t paragraph_end_ = kNone;
  const MarkdownInlineScanner inline_scanner_;
};

std::size_t MarkdownReader::FenceLength(std::string_view line,
                                        char* fence_char) {
  std::size_t at = 0;
  while (at < line.size() && at < 3 && line[at] == ' ') ++at;
  if (at == line.size() || (line[at] != '`' && line[at] != '~')) return 0;
  const char c = line[at];
  std::size_t length = 0;
  while (at + length < line.size() && line[at + length] == c) ++length;
  if (length < 3) return 0;
  *fence_char = c;
  return length;
}

bool MarkdownReader::IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

bool MarkdownReader::StartsHtmlBlock(std::string_view line) {
  if (line.empty() || line[0] != '<') return false;
  if (line.substr(0, 2) == "<!" || line.substr(0, 2) == "<?") return true;
  const std::size_t name_begin = line.size() > 1 && line[1] == '/' ? 2 : 1;
  std::size_t name_end = name_begin;
  while (name_end < line.size() &&
         std::isalnum(static_cast<unsigned char>(line[name_end]))) {
    ++name_end;
  }
  if (name_end == name_begin) return false;
  std::string name(line.substr(name_begin, name_end - name_begin));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  static const char* const kBlockTags[] = {
      "address", "article", "aside",    "blockquote", "details", "dialog",
      "div",     "dl",      "fieldset", "figure",     "footer",  "form",
      "h1",      "h2",      "h3",       "h4",         "h5",      "h6",
      "header",  "hr",      "li",       "main",       "nav",     "ol",
      "p",       "pre",     "section",  "table",      "ul",      "script",
      "style",   "textarea"};
  for (const char* block : kBlockTags) {
    if (name == block) return true;
  }
  // Any other tag starts a block only when the line holds it alone.
  const std::size_t close = line.find('>');
  return close != kNone && IsBlank(line.substr(close + 1));
}

bool MarkdownReader::IsThematicBreak(std::string_view line) {
  // ---, ***, ___ (spaces between allowed); === underlines a heading.
  char mark = 0;
  int count = 0;
  for (char c : line) {
    if (c == ' ' || c == '\t') continue;
    if ((c != '-' && c != '*' && c != '_' && c != '=') ||
        (mark != 0 && c != mark)) {
      return false;
    }
    mark = c;
    ++count;
  }
  return count >= 3 || (mark == '=' && count >= 1);
}

bool MarkdownReader::IsTableRule(std::string_view line) {
  bool dash = false;
  bool pipe = false;
  for (char c : line) {
    if (c == '-') {
      dash = true;
    } else if (c == '|') {
      pipe = true;
    } else if (c != ':' && c != ' ' && c != '\t') {
      return false;
    }
  }
  return dash && pipe;
}

bool MarkdownReader::IsReferenceDefinition(std::string_view line) {
  const std::size_t at = line.find_first_not_of(' ');
  if (at == kNone || at > 3 || line[at] != '[') return false;
  const std::size_t close = line.find("]:", at);
  return close != kNone && close > at + 1;
}

std::size_t MarkdownReader::ContentStart(std::size_t begin, std::size_t end,
                                         bool* heading, bool* list_item) const {
  *heading = false;
  *list_item = false;
  std::size_t at = begin;
  auto skip_spaces = [&] {
    while (at < end && (source_[at] == ' ' || source_[at] == '\t')) ++at;
  };
  skip_spaces();
  while (at < end && source_[at] == '>') {  // Quotes, nested or not.
    ++at;
    skip_spaces();
  }
  // A list item: -, * or + and a space, or digits and . or ) and a space.
  std::size_t marker = at;
  while (marker < end &&
         std::isdigit(static_cast<unsigned char>(source_[marker])) &&
         marker - at < 9) {
    ++marker;
  }
  const bool ordered = marker > at && marker < end &&
                       (source_[marker] == '.' || source_[marker] == ')');
  const bool bullet =
      marker == at && at < end &&
      (source_[at] == '-' || source_[at] == '*' || source_[at] == '+');
  if ((ordered || bullet) && (ordered ? marker + 1 : at + 1) < end &&
      source_[ordered ? marker + 1 : at + 1] == ' ') {
    at = (ordered ? marker + 1 : at + 1);
    *list_item = true;
    skip_spaces();
    // A task list's box.
    if (end - at >= 4 && source_[at] == '[' && source_[at + 2] == ']' &&
        source_[at + 3] == ' ' &&
        (source_[at + 1] == ' ' || source_[at + 1] == 'x' ||
         source_[at + 1] == 'X')) {
      at += 4;
    }
    return at;
  }
  std::size_t hashes = at;
  while (hashes < end && source_[hashes] == '#' && hashes - at < 7) ++hashes;
  if (hashes > at && hashes - at <= 6 &&
      (hashes == end || source_[hashes] == ' ' || source_[hashes] == '\t')) {
    *heading = true;
    at = hashes;
  }
  return at;
}

void MarkdownReader::Read() {
  for (std::size_t begin = 0; begin <= source_.size();) {
    std::size_t end = source_.find('\n', begin);
    const std::size_t next = end == kNone ? source_.size() + 1 : end + 1;
    if (end == kNone) end = source_.size();
    if (end > begin && source_[end - 1] == '\r') --end;
    lines_.emplace_back(begin, end);
    begin = next;
  }
  std::size_t i = 0;
  // Front matter (YAML between --- lines at the top) is data, not prose.
  if (!lines_.empty() && Line(0) == "---") {
    for (std::size_t j = 1; j < lines_.size(); ++j) {
      if (Line(j) == "---" || Line(j) == "...") {
        i = j + 1;
        break;
      }
    }
  }
  char fence_char = 0;
  std::size_t fence_length = 0;  // Inside a fenced code block when not 0.
  bool blank_before = true;
  bool in_table = false;
  bool in_html = false;
  bool list_before = false;  // The last block was a list item.
  for (; i < lines_.size(); ++i) {
    const std::string_view line = Line(i);
    const auto [begin, end] = lines_[i];
    char this_char = 0;
    const std::size_t this_length = FenceLength(line, &this_char);
    if (fence_length > 0) {
      if (this_char == fence_char && this_length >= fence_length &&
          IsBlank(line.substr(line.find(fence_char) + this_length))) {
        fence_length = 0;
      }
      continue;
    }
    const bool blank = IsBlank(line);
    if (blank) {
      EndParagraph();
      blank_before = true;
      in_table = in_html = false;
      continue;
    }
    const bool was_blank = blank_before;
    blank_before = false;
    if (this_length > 0) {
      EndParagraph();
      fence_char = this_char;
      fence_length = this_length;
      continue;
    }
    const std::size_t indent = line.find_first_not_of(' ');
    const bool indented = line[0] == '\t' || indent >= 4;
    if (in_html ||
        (indented && was_blank && !list_before && paragraph_begin_ == kNone)) {
      continue;  // Indented code, or an HTML block.
    }
    if (paragraph_begin_ == kNone && indent < 4 &&
        StartsHtmlBlock(line.substr(indent))) {
      in_html = true;  // An HTML block runs to the next blank line.
      continue;
    }
    if (IsThematicBreak(line) || IsReferenceDefinition(line)) {
      EndParagraph();
      continue;
    }
    const bool rule_next = i + 1 < lines_.size() && IsTableRule(Line(i + 1));
    if (IsTableRule(line)) {
      EndParagraph();
      in_table = true;
      continue;
    }
    if ((in_table || rule_next) && line.find('|') != kNone) {
      EndParagraph();
      AddTableRow(begin, end);
      continue;
    }
    bool heading = false;
    bool list_item = false;
    const std::size_t content = ContentStart(begin, end, &heading, &list_item);
    if (content == begin || (indented && list_before)) {
      // A plain line continues the paragraph (or list item) before it.
      if (paragraph_begin_ == kNone) paragraph_begin_ = begin;
      paragraph_end_ = end;
      continue;
    }
    EndParagraph();
    list_before = list_item;
    std::size_t content_end = end;
    if (heading) {  // Closing #s are markers too.
      std::size_t trimmed = end;
      while (trimmed > content && IsAsciiSpace(source_[trimmed - 1])) --trimmed;
      std::size_t hashes = trimmed;
      while (hashes > content && source_[hashes - 1] == '#') --hashes;
      if (hashes < trimmed &&
          (hashes == content || source_[hashes - 1] == ' ')) {
        content_end = hashes;
      }
      AddInlineText(0, content, content_end);
      continue;
    }
    paragraph_begin_ = content;
    paragraph_end_ = content_end;
  }
  EndParagraph();
}

void MarkdownReader::EndParagraph() {
  if (paragraph_begin_ == kNone) return;
  AddInlineText(0, paragraph_begin_, paragraph_end_);
  paragraph_begin_ = paragraph_end_ = kNone;
}

void MarkdownReader::AddTableRow(std::size_t begin, std::size_t end) {
  std::size_t cell = begin;
  for (std::size_t at = begin; at <= end; ++at) {
    if (at < end && source_[at] == '\\') {
      ++at;
      continue;
    }
    if (at == end || source_[at] == '|') {
      if (at > cell) AddInlineText(0, cell, at);
      cell = at + 1;
    }
  }
}

void MarkdownReader::AddInlineText(int region, std::size_t begin,
                                   std::size_t end, int depth) {
  while (begin < end && IsAsciiSpace(source_[begin])) ++begin;
  while (end > begin && IsAsciiSpace(source_[end - 1])) --end;
  if (begin == end) return;
  const std::vector<MarkdownInline> constructs =
      depth < kMaxInlineDepth ? inline_scanner_.Scan(begin, end)
                              : std::vector<MarkdownInline>{};
  std::u32string text;
  std::size_t words = begin;
  for (std::size_t k = 0; k < constructs.size(); ++k) {
    text += DecodeWords(source_.substr(words, constructs[k].begin - words));
    text.push_back(InlineMarker(static_cast<int>(k)));
    words = constructs[k].end;
  }
  text += DecodeWords(source_.substr(words, end - words));
  text = CollapseSpaces(text);
  if (!HasLetters(text)) {
    for (const MarkdownInline& construct : constructs) {
      if (construct.words_end > construct.words_begin) {
        AddInlineText(region, construct.words_begin, construct.words_end,
                      depth + 1);
      }
    }
    return;
  }
  std::vector<int> markers;
  for (const MarkdownInline& construct : constructs) {
    markers.push_back(document_.AddRegion(construct.begin, construct.end));
  }
  document_.AddText(region, begin, end, EncodeUtf8(text), markers,
                    {TextEscape::kNone});
  for (std::size_t k = 0; k < constructs.size(); ++k) {
    if (constructs[k].words_end > constructs[k].words_begin) {
      AddInlineText(markers[k], constructs[k].words_begin,
                    constructs[k].words_end, depth + 1);
    }
  }
}

}  // namespace

MarkedDocument ReadMarkdown(std::string markdown) {
  DecodeUtf8(markdown);  // Throws for invalid UTF-8.
  MarkedDocument document(std::move(markdown));
  MarkdownReader(&document).Read();
  return document;
}

}  // namespace fanyi
