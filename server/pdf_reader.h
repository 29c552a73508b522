#ifndef FANYI_SERVER_PDF_READER_H_
#define FANYI_SERVER_PDF_READER_H_

#include <string>

namespace fanyi {

// Settings of PdfReader.
struct PdfReaderOptions {
  // The fanyi-pdf-text program.
  std::string program;
  // CPU seconds and address space (MiB) one PDF's reading may take.
  int cpu_seconds = 20;
  int memory_mb = 1024;
};

// Reads uploaded .pdf files in a process of their own (fanyi-pdf-text,
// server/pdf_text_main.cc) under a CPU and a memory limit, and waits for
// it no longer than those allow: poppler's layout of a page grows with the
// square of its words, and a crash in it must not take the server with it.
// Thread-safe: each call runs its own process.
class PdfReader {
 public:
  explicit PdfReader(PdfReaderOptions options);

  // The .docx of `pdf`'s paragraphs (PdfText::WordDocument). Throws
  // std::invalid_argument when the PDF is refused (the program's reason),
  // takes more than its CPU time or memory, or makes the program fail;
  // std::runtime_error when the program cannot be run.
  std::string WordDocument(const std::string& pdf) const;

 private:
  const PdfReaderOptions options_;
};

}  // namespace fanyi

#endif  // FANYI_SERVER_PDF_READER_H_
