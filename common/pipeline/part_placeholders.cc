#include "common/pipeline/part_placeholders.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <utility>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {

std::vector<std::string> RenumberPlaceholders(
    std::vector<std::string> tokens,
    const std::vector<std::string>& sentence_restorations,
    std::vector<std::string>* restorations) {
  std::map<int, int> renumbered;
  for (std::string& token : tokens) {
    const int index = PlaceholderIndex(token);
    if (index < 1 || index > static_cast<int>(sentence_restorations.size())) {
      continue;
    }
    auto [it, added] =
        renumbered.emplace(index, static_cast<int>(renumbered.size()) + 1);
    if (added) restorations->push_back(sentence_restorations[index - 1]);
    token = PlaceholderToken(it->second);
  }
  return tokens;
}

std::vector<std::string> TokenizeAroundPlaceholders(
    const Tokenizer& tokenizer, const VocabularyLookup& lookup,
    std::string_view text) {
  const std::u32string decoded = DecodeUtf8(text);
  std::vector<std::string> tokens;
  const auto add_stretch = [&](std::size_t begin, std::size_t end) {
    while (begin < end && IsSpace(decoded[begin])) ++begin;
    while (end > begin && IsSpace(decoded[end - 1])) --end;
    if (begin == end) return;
    for (std::string& token : tokenizer.Tokenize(lookup.Normalize(EncodeUtf8(
             std::u32string_view(decoded).substr(begin, end - begin))))) {
      tokens.push_back(std::move(token));
    }
  };
  std::size_t stretch = 0;
  for (std::size_t i = 0; i < decoded.size();) {
    const std::size_t end = PlaceholderEnd(decoded, i);
    if (end == i) {
      ++i;
      continue;
    }
    add_stretch(stretch, i);
    tokens.push_back(
        EncodeUtf8(std::u32string_view(decoded).substr(i, end - i)));
    stretch = i = end;
  }
  add_stretch(stretch, decoded.size());
  return tokens;
}

std::vector<std::vector<std::string>> JoinPlaceholderClauses(
    std::vector<std::vector<std::string>> clauses) {
  const auto all_placeholders = [](const std::vector<std::string>& clause) {
    return std::all_of(clause.begin(), clause.end(), [](const std::string& t) {
      return PlaceholderIndex(t) > 0;
    });
  };
  std::vector<std::vector<std::string>> joined;
  std::vector<std::string> pending;  // Placeholders before the first words.
  for (std::vector<std::string>& clause : clauses) {
    if (!all_placeholders(clause)) {
      clause.insert(clause.begin(), pending.begin(), pending.end());
      pending.clear();
      joined.push_back(std::move(clause));
    } else if (joined.empty()) {
      pending.insert(pending.end(), clause.begin(), clause.end());
    } else {
      joined.back().insert(joined.back().end(), clause.begin(), clause.end());
    }
  }
  if (!pending.empty()) joined.push_back(std::move(pending));
  return joined;
}

}  // namespace fanyi
