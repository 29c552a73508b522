// Reading tab-separated parallel corpora (source<TAB>target per line).
#ifndef FANYI_COMMON_TEXT_PARALLEL_CORPUS_H_
#define FANYI_COMMON_TEXT_PARALLEL_CORPUS_H_

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace fanyi {

// One usable line of a corpus, both sides trimmed.
struct SentencePair {
  std::string source;
  std::string target;
  int64_t line_number;  // 1-based line in the file
};

// Which columns of a TSV line hold the source and the target, numbered from
// 0: one corpus of lang1<TAB>lang2 lines trains both directions.
struct TsvColumns {
  int source = 0;  // The first column.
  int target = 1;  // The second.

  // Throws std::invalid_argument unless both are columns and differ.
  void Validate() const;
};

// A line that was skipped, and why: "empty line", "invalid UTF-8 at byte N"
// (N counted from 0 within the line), "no tab", "fewer than N columns",
// "empty source" or "empty target".
struct BadLine {
  int64_t line_number;  // 1-based line in the file
  std::string reason;
};

// The usable pairs of a corpus file and the lines that were skipped.
struct ParallelCorpus {
  std::vector<SentencePair> pairs;
  std::vector<BadLine> bad_lines;
};

// Reads a UTF-8 TSV file of source<TAB>target lines (or the columns given)
// a chunk at a time, so that a corpus of any size is read in bounded
// memory. A trailing '\r', a leading byte-order mark and the other columns
// are ignored (Tatoeba files carry an attribution column); whitespace
// around each side is trimmed.
class ParallelTsvReader {
 public:
  // Opens `path`; throws std::runtime_error naming the file, and
  // std::invalid_argument for invalid `columns`.
  explicit ParallelTsvReader(std::string path, TsvColumns columns = {});

  // Reads up to `max_lines` more lines into `chunk` (appended to it);
  // returns false when the file had no line left. Throws
  // std::runtime_error naming the file on a read error.
  bool Read(int64_t max_lines, ParallelCorpus* chunk);

 private:
  std::string path_;
  TsvColumns columns_;
  std::ifstream file_;
  int64_t line_number_ = 0;  // Of the last line read.
};

// Reads a whole TSV file as ParallelTsvReader does.
ParallelCorpus ReadParallelTsv(const std::string& path,
                               TsvColumns columns = {});

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_PARALLEL_CORPUS_H_
