#include "common/formats/pdf_text.h"

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "common/formats/marked_document.h"
#include "common/formats/zip_package.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// poppler writes what it thinks of a damaged file to stderr: a hostile
// upload would fill the log with it. The reader's own message says enough.
void Quiet(const std::string&, void*) {}

// A word's text as UTF-8, from poppler's UTF-16: surrogate pairs joined,
// and what XML cannot hold (control characters, lone surrogates,
// noncharacters U+FFFE and U+FFFF) dropped.
std::string WordText(const poppler::ustring& units) {
  std::string text;
  for (std::size_t i = 0; i < units.size(); ++i) {
    char32_t c = units[i];
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < units.size() &&
        units[i + 1] >= 0xdc00 && units[i + 1] < 0xe000) {
      c = 0x10000 + ((c - 0xd800) << 10) + (units[++i] - 0xdc00);
    } else if (c >= 0xd800 && c < 0xe000) {
      continue;
    }
    if ((c < 0x20 && c != '\t') || c == 0x7f || c == 0xfffe || c == 0xffff) {
      continue;
    }
    AppendUtf8(c, &text);
  }
  return text;
}

// The last code point of non-empty UTF-8 `text`.
char32_t LastCodePoint(const std::string& text) {
  std::size_t start = text.size() - 1;
  while (start > 0 &&
         (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80) {
    --start;
  }
  const std::u32string last = DecodeUtf8(std::string_view(text).substr(start));
  return last.empty() ? 0 : last.back();
}

// One line of a page's text: words side by side, in reading order.
struct TextLine {
  std::string text;
  double left = 0;
  double right = 0;
  double top = 0;
  double bottom = 0;
  double size = 0;              // Its first word's font size.
  double first_word_width = 0;  // For whether it would have fit above.
  bool space_after = false;     // After its last word.
  int page = 0;
};

// Builds a document's paragraphs from its pages' words in reading order:
// words into lines, then lines into paragraphs where a paragraph visibly
// ends. Columns are measured over the whole document, as a book's pages
// share theirs.
class PdfLayout {
 public:
  // Adds the next word: to the line it stands on, or as a new line. A wide
  // gap (a table's next cell, a tab) starts a new line too.
  void Add(const poppler::text_box& word) {
    std::string text = WordText(word.text());
    bytes_ += text.size() + 1;  // Counted even when nothing is kept.
    if (bytes_ > PdfText::kMaxTextBytes) {
      throw std::invalid_argument("the .pdf holds more than " +
                                  std::to_string(PdfText::kMaxTextBytes >> 20) +
                                  " MiB of text, the limit");
    }
    if (text.empty()) return;
    const poppler::rectf box = word.bbox();
    const double height = std::max(box.height(), 1.0);
    const double center = box.top() + box.height() / 2;
    if (!lines_.empty() && lines_.back().page == pages_) {
      TextLine& line = lines_.back();
      const double line_height = line.bottom - line.top;
      const double line_center = line.top + line_height / 2;
      if (std::abs(center - line_center) <
              0.5 * std::max(line_height, height) &&
          box.left() >= line.right - height &&
          box.left() - line.right < 2 * std::max(line.size, height)) {
        line.text += line.space_after ? " " + text : text;
        line.right = std::max(line.right, box.right());
        line.top = std::min(line.top, box.top());
        line.bottom = std::max(line.bottom, box.bottom());
        line.space_after = word.has_space_after();
        return;
      }
    }
    TextLine line;
    line.text = std::move(text);
    line.left = box.left();
    line.right = box.right();
    line.top = box.top();
    line.bottom = box.top() + height;
    line.size = word.has_font_info() && word.get_font_size() > 0
                    ? word.get_font_size()
                    : height;
    line.first_word_width = box.width();
    line.space_after = word.has_space_after();
    line.page = pages_;
    lines_.push_back(std::move(line));
  }

  // Ends a page: the next word starts the next one.
  void EndPage() { ++pages_; }

  // The document's paragraphs.
  std::vector<PdfParagraph> Paragraphs() const {
    std::vector<PdfParagraph> paragraphs;
    // How far right the lines that start where each line starts reach: the
    // right edge of its column.
    std::unordered_map<long, double> reach;
    for (const TextLine& line : lines_) {
      double& right = reach[Bucket(line)];
      right = std::max(right, line.right);
    }
    const auto column_right = [&reach](const TextLine& line) {
      double right = line.right;
      for (long bucket = Bucket(line) - 1; bucket <= Bucket(line) + 1;
           ++bucket) {
        const auto found = reach.find(bucket);
        if (found != reach.end()) right = std::max(right, found->second);
      }
      return right;
    };
    double paragraph_size = 0;
    for (std::size_t i = 0; i < lines_.size(); ++i) {
      const TextLine& line = lines_[i];
      const bool page_start = i == 0 || lines_[i - 1].page != line.page;
      if (page_start || EndsParagraph(lines_[i - 1], line, paragraph_size,
                                      column_right(lines_[i - 1]))) {
        paragraphs.push_back(PdfParagraph{line.text, line.size, page_start});
        paragraph_size = line.size;
      } else {
        JoinLine(line.text, &paragraphs.back().text);
      }
    }
    return paragraphs;
  }

 private:
  // Which of the page's 20-point strips (a few characters) a line starts
  // in; a strip's lines share a column. Coordinates past any page, or not
  // numbers at all (a hostile file's), share the outermost strips.
  static long Bucket(const TextLine& line) {
    const double strip = line.left / 20;
    return std::isnan(strip)
               ? 0
               : static_cast<long>(std::clamp(std::floor(strip), -1e6, 1e6));
  }

  // True when `next` starts a new paragraph after `line`: a gap wider than
  // a line's spacing, a jump back up (another column, a cell beside), a
  // change of size, a start far left of `line`'s (`line` was a cell or a
  // column of its own), or `line` ending short of its column where
  // `next`'s first word would have fit.
  static bool EndsParagraph(const TextLine& line, const TextLine& next,
                            double paragraph_size, double column_right) {
    const double height =
        std::max(line.bottom - line.top, next.bottom - next.top);
    const double gap = next.top - line.bottom;
    return gap > 0.6 * height || gap < -0.5 * height ||
           std::abs(next.size - paragraph_size) > 0.15 * paragraph_size ||
           next.left < line.left - 4 * next.size ||
           line.right + 0.5 * next.size + next.first_word_width < column_right;
  }

  // Continues a paragraph with the next line: a word hyphenated at the
  // line's end ("trans-" "lation") joined again, Chinese and Japanese lines
  // joined without a space, other lines with one.
  static void JoinLine(const std::string& text, std::string* paragraph) {
    const std::u32string first = DecodeUtf8(FirstCharacter(text));
    const char32_t start = first.empty() ? 0 : first.front();
    const char32_t end = LastCodePoint(*paragraph);
    const char before_hyphen =
        paragraph->size() >= 2 ? (*paragraph)[paragraph->size() - 2] : ' ';
    if (end == '-' && before_hyphen >= 'a' && before_hyphen <= 'z' &&
        start >= 'a' && start <= 'z') {
      paragraph->pop_back();
      *paragraph += text;
    } else if (IsCjk(end) && IsCjk(start)) {
      *paragraph += text;
    } else {
      *paragraph += " " + text;
    }
  }

  static std::string FirstCharacter(const std::string& text) {
    std::size_t end = 1;
    while (end < text.size() &&
           (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) {
      ++end;
    }
    return text.substr(0, end);
  }

  std::size_t bytes_ = 0;  // The document's text so far.
  int pages_ = 0;
  std::vector<TextLine> lines_;
};

}  // namespace

PdfText::PdfText(const std::string& bytes) {
  poppler::set_debug_error_function(Quiet, nullptr);
  if (bytes.size() > static_cast<std::size_t>(INT32_MAX)) {
    throw std::invalid_argument("the .pdf is too large");
  }
  const std::unique_ptr<poppler::document> document(
      poppler::document::load_from_raw_data(bytes.data(),
                                            static_cast<int>(bytes.size())));
  if (document == nullptr) {
    throw std::invalid_argument("the file is not a .pdf that can be read");
  }
  if (document->is_locked()) {
    throw std::invalid_argument("the .pdf is locked with a password");
  }
  const int pages = document->pages();
  if (pages > kMaxPages) {
    throw std::invalid_argument("the .pdf has " + std::to_string(pages) +
                                " pages; the limit is " +
                                std::to_string(kMaxPages));
  }
  PdfLayout layout;
  for (int index = 0; index < pages; ++index) {
    const std::unique_ptr<poppler::page> page(document->create_page(index));
    if (page == nullptr) continue;
    for (const poppler::text_box& word :
         page->text_list(poppler::page::text_list_include_font)) {
      layout.Add(word);
    }
    layout.EndPage();
  }
  paragraphs_ = layout.Paragraphs();
  if (paragraphs_.size() > kMaxParagraphs) {
    throw std::invalid_argument("the .pdf has more than " +
                                std::to_string(kMaxParagraphs) +
                                " paragraphs, the limit");
  }
  if (paragraphs_.empty()) {
    throw std::invalid_argument(
        "the .pdf has no text to translate (a scanned document would need "
        "OCR first)");
  }
}

std::string PdfText::WordDocument() const {
  constexpr std::string_view kWord =
      "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
  std::string document =
      "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
      "<w:document xmlns:w=\"" +
      std::string(kWord) + "\"><w:body>";
  bool first = true;
  for (const PdfParagraph& paragraph : paragraphs_) {
    document += "<w:p>";
    if (paragraph.page_start && !first) {
      document += "<w:r><w:br w:type=\"page\"/></w:r>";
    }
    first = false;
    document += "<w:r>";
    if (paragraph.font_size > 0) {
      // Half-points, within Word's range.
      const long half_points =
          std::clamp(std::lround(paragraph.font_size * 2), 2L, 3276L);
      document += "<w:rPr><w:sz w:val=\"" + std::to_string(half_points) +
                  "\"/></w:rPr>";
    }
    document += "<w:t xml:space=\"preserve\">" +
                EscapeText(paragraph.text, TextEscape::kMarkupText) +
                "</w:t></w:r></w:p>";
  }
  document += "</w:body></w:document>";
  return WriteZip(
      {{"[Content_Types].xml",
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
        "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/"
        "content-types\"><Default Extension=\"rels\" "
        "ContentType=\"application/"
        "vnd.openxmlformats-package.relationships+xml\"/><Default "
        "Extension=\"xml\" ContentType=\"application/xml\"/><Override "
        "PartName=\"/word/document.xml\" ContentType=\"application/"
        "vnd.openxmlformats-officedocument.wordprocessingml.document.main+"
        "xml\"/></Types>"},
       {"_rels/.rels",
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
        "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/"
        "2006/relationships\"><Relationship Id=\"rId1\" "
        "Type=\"http://schemas.openxmlformats.org/officeDocument/2006/"
        "relationships/officeDocument\" Target=\"word/document.xml\"/>"
        "</Relationships>"},
       {"word/document.xml", document}});
}

}  // namespace fanyi
