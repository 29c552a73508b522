// fanyi-pdf-text: reads a PDF on stdin and writes its text, as a .docx of
// its paragraphs (common/formats/pdf_text.h), on stdout, within the CPU
// time and memory it is given. fanyi-server runs it for each .pdf it is
// sent (PdfReader), so that poppler's work on a hostile file, whose page
// layout grows with the square of its words, costs a process of its own
// and never the server's time, memory or life.
//
//   fanyi-pdf-text [--cpu_seconds N] [--memory_mb N] < in.pdf > out.docx
//
// Exit status: 0 with the .docx; 2 when the PDF is refused, the reason on
// stderr; 1 when reading failed otherwise.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <iterator>
#include <new>
#include <stdexcept>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/formats/pdf_text.h"

ABSL_FLAG(int, cpu_seconds, 20,
          "CPU seconds the reading may take; the system stops it past them.");
ABSL_FLAG(int, memory_mb, 1024,
          "Memory the reading may take (its heap and anonymous mappings), in "
          "MiB.");

// Sanitizers reserve their shadow memory as data mappings, which a data
// limit would then refuse every later allocation: sanitized builds (the
// tests under ASan and TSan) keep the CPU limit only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FANYI_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FANYI_SANITIZED 1
#endif
#endif

namespace {

// Holds this process to `seconds` of CPU and `megabytes` of data (its
// heap and anonymous mappings; not the libraries it has loaded, which a
// CUDA build maps by the gigabyte).
void Limit(int seconds, int megabytes) {
  const rlimit cpu{static_cast<rlim_t>(seconds),
                   static_cast<rlim_t>(seconds) + 1};
  const rlimit memory{static_cast<rlim_t>(megabytes) << 20,
                      static_cast<rlim_t>(megabytes) << 20};
#ifdef FANYI_SANITIZED
  static_cast<void>(memory);
  if (setrlimit(RLIMIT_CPU, &cpu) != 0) {
#else
  if (setrlimit(RLIMIT_CPU, &cpu) != 0 ||
      setrlimit(RLIMIT_DATA, &memory) != 0) {
#endif
    throw std::runtime_error("cannot set the process's limits");
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Reads a PDF on stdin and writes its paragraphs as a .docx on stdout.\n"
      "Usage: fanyi-pdf-text [--cpu_seconds N] [--memory_mb N] < in.pdf > "
      "out.docx");
  absl::ParseCommandLine(argc, argv);
  try {
    if (absl::GetFlag(FLAGS_cpu_seconds) < 1 ||
        absl::GetFlag(FLAGS_memory_mb) < 64) {
      throw std::runtime_error(
          "--cpu_seconds must be at least 1 and --memory_mb at least 64");
    }
    Limit(absl::GetFlag(FLAGS_cpu_seconds), absl::GetFlag(FLAGS_memory_mb));
    const std::string pdf((std::istreambuf_iterator<char>(std::cin)),
                          std::istreambuf_iterator<char>());
    const std::string docx = fanyi::PdfText(pdf).WordDocument();
    if (std::fwrite(docx.data(), 1, docx.size(), stdout) != docx.size() ||
        std::fflush(stdout) != 0) {
      throw std::runtime_error("cannot write the .docx");
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "the .pdf takes more than " << absl::GetFlag(FLAGS_memory_mb)
              << " MiB to read" << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "fanyi-pdf-text: " << e.what() << std::endl;
    return 1;
  }
}
