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

// Removes IsSpace characters (ASCII and Unicode spaces) at both ends of
// valid UTF-8 text.
std::string Trim(std::string_view text) {
  const std::u32string decoded = DecodeUtf8(text);
  std::size_t begin = 0;
  std::size_t end = decoded.size();
  while (begin < end && IsSpace(decoded[begin])) ++begin;
  while (end > begin && IsSpace(decoded[end - 1])) --end;
  return EncodeUtf8(std::u32string_view(decoded).substr(begin, end - begin));
}

// Returns an empty string and fills `pair` for a usable line, or the reason
// the line is skipped.
std::string ParseLine(std::string_view line, SentencePair* pair) {
  if (Trim(line).empty()) return "empty line";
  const std::size_t tab = line.find('\t');
  if (tab == std::string_view::npos) return "no tab";
  const std::size_t second_tab = line.find('\t', tab + 1);
  pair->source = Trim(line.substr(0, tab));
  pair->target = Trim(line.substr(tab + 1, second_tab == std::string_view::npos
                                               ? std::string_view::npos
                                               : second_tab - tab - 1));
  if (pair->source.empty()) return "empty source";
  if (pair->target.empty()) return "empty target";
  return "";
}

}  // namespace

ParallelCorpus ReadParallelTsv(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw std::runtime_error("cannot open parallel corpus file " + path + ": " +
                             std::strerror(errno));
  }
  ParallelCorpus corpus;
  std::string line;
  int64_t line_number = 0;
  while (std::getline(file, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view view = line;
    if (line_number == 1 &&
        view.substr(0, kByteOrderMark.size()) == kByteOrderMark) {
      view.remove_prefix(kByteOrderMark.size());
    }
    SentencePair pair;
    pair.line_number = line_number;
    std::string reason;
    try {
      DecodeUtf8(line);  // validates; its message names the byte
      reason = ParseLine(view, &pair);
    } catch (const std::invalid_argument& e) {
      reason = e.what();
    }
    if (reason.empty()) {
      corpus.pairs.push_back(std::move(pair));
    } else {
      corpus.bad_lines.push_back({line_number, std::move(reason)});
    }
  }
  if (file.bad()) {
    throw std::runtime_error("error while reading parallel corpus file " +
                             path + ": " + std::strerror(errno));
  }
  return corpus;
}

}  // namespace fanyi
