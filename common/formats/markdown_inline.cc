#include "common/formats/markdown_inline.h"

#include <algorithm>
#include <cctype>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr std::size_t kNotFound = std::string_view::npos;

}  // namespace

MarkdownInlineScanner::MarkdownInlineScanner(std::string_view source)
    : source_(source) {
  std::vector<std::size_t> squares;
  std::vector<std::size_t> rounds;
  for (std::size_t at = 0; at < source_.size(); ++at) {
    const char c = source_[at];
    if (c == '\\') {
      ++at;
    } else if (c == '[') {
      squares.push_back(at);
    } else if (c == '(') {
      rounds.push_back(at);
    } else if (c == ']' && !squares.empty()) {
      matching_[squares.back()] = at;
      squares.pop_back();
    } else if (c == ')' && !rounds.empty()) {
      matching_[rounds.back()] = at;
      rounds.pop_back();
    }
  }
}

std::vector<MarkdownInline> MarkdownInlineScanner::Scan(std::size_t begin,
                                                        std::size_t end) const {
  std::vector<MarkdownInline> constructs;
  ScanMemo memo;
  for (std::size_t at = begin;
       at < end && constructs.size() < kMaxInlineMarkers;) {
    if (source_[at] == '\\') {  // An escaped character is a word's.
      at += 2;
      continue;
    }
    const MarkdownInline found = InlineAt(at, end, &memo);
    if (found.end == at || !found.marker) {
      at = std::max(found.end, at + 1);
      continue;
    }
    constructs.push_back(found);
    at = found.end;
  }
  return constructs;
}

std::size_t MarkdownInlineScanner::Matching(std::size_t open,
                                            std::size_t end) const {
  // Pairs nest, so a bracket paired beyond `end` has no closing one within
  // it, as a scan from `open` counting depth would find.
  const auto found = matching_.find(open);
  return found == matching_.end() || found->second >= end ? kNotFound
                                                          : found->second;
}

template <typename Accepts>
std::size_t MarkdownInlineScanner::FindClosing(std::string_view delimiter,
                                               std::size_t from,
                                               std::size_t end, ScanMemo* memo,
                                               Accepts accepts) const {
  for (std::string_view unclosed : memo->unclosed) {
    if (unclosed == delimiter) return kNotFound;
  }
  for (std::size_t close = source_.find(delimiter, from);
       close != kNotFound && close + delimiter.size() <= end;
       close = source_.find(delimiter, close + 1)) {
    if (accepts(close)) return close + delimiter.size();
  }
  // Whether a closing run is accepted depends on it alone, not on its
  // opener: a later opener of the same delimiter finds none either.
  memo->unclosed.push_back(delimiter);
  return kNotFound;
}

MarkdownInline MarkdownInlineScanner::InlineAt(std::size_t at, std::size_t end,
                                               ScanMemo* memo) const {
  const char c = source_[at];
  const MarkdownInline none{at, at, 0, 0};
  if (c == '`') {  // A code span: a run of backticks to one as long.
    std::size_t run = at;
    while (run < end && source_[run] == '`') ++run;
    const std::string_view ticks = source_.substr(at, run - at);
    const std::size_t after =
        FindClosing(ticks, run, end, memo, [&](std::size_t close) {
          const std::size_t next = close + ticks.size();
          return source_[close - 1] != '`' &&
                 (next == end || source_[next] != '`');
        });
    // Unmatched backticks are words, all of the run.
    if (after == kNotFound) return {at, run, 0, 0, false};
    return {at, after, 0, 0};
  }
  if (c == '<') {  // An autolink or inline HTML.
    if (memo->angle_from == kNotFound || memo->next_angle < at) {
      memo->angle_from = at;
      memo->next_angle = source_.find('>', at);
    }
    const std::size_t close = memo->next_angle;
    if (close == kNotFound || close >= end) return none;
    const char next = at + 1 < end ? source_[at + 1] : ' ';
    if (std::isalpha(static_cast<unsigned char>(next)) || next == '/' ||
        next == '!') {
      return {at, close + 1, 0, 0};
    }
    return none;
  }
  if (c == '[' || (c == '!' && at + 1 < end && source_[at + 1] == '[')) {
    const std::size_t open = c == '!' ? at + 1 : at;
    const std::size_t close = Matching(open, end);
    if (close == kNotFound || close + 1 >= end) return none;
    const char after = source_[close + 1];
    if (after != '(' && after != '[') return none;
    const std::size_t target = Matching(close + 1, end);
    if (target == kNotFound) return none;
    return {at, target + 1, open + 1, close};  // The target stays as it is.
  }
  if (c != '*' && c != '_' && c != '~') return none;
  // Emphasis and strikethrough: *, **, ***, _, __, ___ or ~~.
  std::size_t run = at;
  while (run < end && source_[run] == c && run - at < 3) ++run;
  const std::string_view delimiter = source_.substr(at, run - at);
  if ((c == '~' && delimiter.size() != 2) || run == end ||
      IsAsciiSpace(source_[run])) {
    return none;
  }
  const auto is_word = [](char x) {
    return std::isalnum(static_cast<unsigned char>(x)) != 0;
  };
  if (c == '_' && at > 0 && is_word(source_[at - 1])) {
    return none;  // snake_case is a word.
  }
  const std::size_t after =
      FindClosing(delimiter, run + 1, end, memo, [&](std::size_t close) {
        const std::size_t next = close + delimiter.size();
        return !IsAsciiSpace(source_[close - 1]) &&
               (next == end ||
                (source_[next] != c && (c != '_' || !is_word(source_[next]))));
      });
  if (after == kNotFound) return none;
  return {at, after, run, after - delimiter.size()};
}

}  // namespace fanyi
