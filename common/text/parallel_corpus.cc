#include "common/text/parallel_corpus.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// Removes IsSpace characters (ASCII and Unicode spaces) at both ends.
std::u32string_view Trim(std::u32string_view text) {
  std::size_t begin = 0;
  std::size_t end = text.size();
  while (begin < end && IsSpace(text[begin])) ++begin;
  while (end > begin && IsSpace(text[end - 1])) --end;
  return text.substr(begin, end - begin);
}

// Returns an empty string and fills `pair` for a usable line, or the reason
// the line is skipped. The line is decoded once: this runs for every line
// of corpora of millions.
std::string ParseLine(std::string_view line, const TsvColumns& columns,
                      SentencePair* pair) {
  const std::u32string decoded = DecodeUtf8(line);  // Throws on bad bytes.
  const std::u32string_view text = decoded;
  if (Trim(text).empty()) return "empty line";
  const int needed = std::max(columns.source, columns.target) + 1;
  std::u32string_view fields[2];  // Source, target.
  std::size_t begin = 0;
  for (int column = 0; column < needed; ++column) {
    if (begin > text.size()) {
      return column == 1 ? "no tab"
                         : "fewer than " + std::to_string(needed) + " columns";
    }
    const std::size_t tab = text.find(U'\t', begin);
    const std::u32string_view field = text.substr(
        begin, tab == std::u32string_view::npos ? tab : tab - begin);
    if (column == columns.source) fields[0] = field;
    if (column == columns.target) fields[1] = field;
    begin = tab == std::u32string_view::npos ? text.size() + 1 : tab + 1;
  }
  pair->source = EncodeUtf8(Trim(fields[0]));
  pair->target = EncodeUtf8(Trim(fields[1]));
  if (pair->source.empty()) return "empty source";
  if (pair->target.empty()) return "empty target";
  return "";
}

}  // namespace

void TsvColumns::Validate() const {
  if (source < 0 || target < 0 || source == target) {
    throw std::invalid_argument(
        "the source and target columns must be two different columns "
        "(numbered from 1), not " +
        std::to_string(source + 1) + " and " + std::to_string(target + 1));
  }
}

ParallelTsvReader::ParallelTsvReader(std::string path, TsvColumns columns)
    : path_(std::move(path)),
      columns_(columns),
      file_(path_, std::ios::binary) {
  columns_.Validate();
  if (!file_) {
    throw std::runtime_error("cannot open parallel corpus file " + path_ +
                             ": " + std::strerror(errno));
  }
}

bool ParallelTsvReader::Read(int64_t max_lines, ParallelCorpus* chunk) {
  std::string line;
  int64_t read = 0;
  while (read < max_lines && std::getline(file_, line)) {
    ++read;
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view view = line;
    if (line_number_ == 1 &&
        view.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
      view.remove_prefix(kByteOrderMark.size());
    }
    SentencePair pair;
    pair.line_number = line_number_;
    std::string reason;
    try {
      reason = ParseLine(view, columns_, &pair);
    } catch (const std::invalid_argument& e) {
      reason = e.what();
    }
    if (reason.empty()) {
      chunk->pairs.push_back(std::move(pair));
    } else {
      chunk->bad_lines.push_back({line_number_, std::move(reason)});
    }
  }
  if (file_.bad()) {
    throw std::runtime_error("error while reading parallel corpus file " +
                             path_ + ": " + std::strerror(errno));
  }
  return read > 0;
}

ParallelCorpus ReadParallelTsv(const std::string& path, TsvColumns columns) {
  ParallelTsvReader reader(path, columns);
  ParallelCorpus corpus;
  while (reader.Read(int64_t{1} << 20, &corpus)) {
  }
  return corpus;
}

}  // namespace fanyi
