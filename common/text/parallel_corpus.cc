#include "common/text/parallel_corpus.h"

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
std::string ParseLine(std::string_view line, SentencePair* pair) {
  const std::u32string decoded = DecodeUtf8(line);  // Throws on bad bytes.
  const std::u32string_view text = decoded;
  if (Trim(text).empty()) return "empty line";
  const std::size_t tab = text.find(U'\t');
  if (tab == std::u32string_view::npos) return "no tab";
  const std::size_t second_tab = text.find(U'\t', tab + 1);
  pair->source = EncodeUtf8(Trim(text.substr(0, tab)));
  pair->target = EncodeUtf8(
      Trim(text.substr(tab + 1, second_tab == std::u32string_view::npos
                                    ? std::u32string_view::npos
                                    : second_tab - tab - 1)));
  if (pair->source.empty()) return "empty source";
  if (pair->target.empty()) return "empty target";
  return "";
}

}  // namespace

ParallelTsvReader::ParallelTsvReader(std::string path)
    : path_(std::move(path)), file_(path_, std::ios::binary) {
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
      reason = ParseLine(view, &pair);
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

ParallelCorpus ReadParallelTsv(const std::string& path) {
  ParallelTsvReader reader(path);
  ParallelCorpus corpus;
  while (reader.Read(int64_t{1} << 20, &corpus)) {
  }
  return corpus;
}

}  // namespace fanyi
