#ifndef FANYI_COMMON_FORMATS_PDF_TEXT_H_
#define FANYI_COMMON_FORMATS_PDF_TEXT_H_

#include <string>
#include <vector>

namespace fanyi {

// One paragraph of a PDF's text, as its pages lay it out.
struct PdfParagraph {
  std::string text;         // UTF-8: its lines joined, words hyphenated at a
                            // line's end joined again.
  double font_size = 0;     // In points: its first word's, 0 when unknown.
  bool page_start = false;  // First on its page.
};

// A PDF's text, read with poppler (Debian's libpoppler-cpp): each page's
// words in reading order, cut into lines and paragraphs by where they
// stand (a blank line's gap, a change of size, a jump to another column).
// A PDF keeps no paragraphs of its own, so this is what a reader sees.
class PdfText {
 public:
  // Pages past this are refused: each takes poppler a layout pass.
  static constexpr int kMaxPages = 1000;
  // Text past this, in all, is refused.
  static constexpr std::size_t kMaxTextBytes = 16 << 20;

  // Reads the PDF in `bytes`. Throws std::invalid_argument when poppler
  // cannot read it, it is locked with a password, has more than kMaxPages
  // pages or more than kMaxTextBytes of text, or has no text at all (a
  // scanned document, which would need OCR).
  explicit PdfText(const std::string& bytes);

  const std::vector<PdfParagraph>& paragraphs() const { return paragraphs_; }

  // The text as a .docx a person can read and edit: a paragraph each, in
  // its size, each page after the first from a page break.
  std::string WordDocument() const;

 private:
  std::vector<PdfParagraph> paragraphs_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_FORMATS_PDF_TEXT_H_
