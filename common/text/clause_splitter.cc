#include "common/text/clause_splitter.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace fanyi {
namespace {

// How good a cut before token `i` is: higher is better, 0 = no boundary.
int BoundaryStrength(const std::vector<std::string>& tokens, std::size_t i) {
  const std::string& before = tokens[i - 1];
  if (before == ";" || before == ":" || before == "\xEF\xBC\x9B" ||
      before == "\xEF\xBC\x9A") {
    return 3;
  }
  if (before == "," || before == "\xEF\xBC\x8C") return 2;
  static const char* const kConjunctions[] = {
      "and",   "but",   "or",    "so",      "because", "although", "though",
      "while", "which", "where", "whereas", "when",    "unless",   "until"};
  for (const char* conjunction : kConjunctions) {
    if (tokens[i] == conjunction) return 1;
  }
  return 0;
}

void Split(const std::vector<std::string>& tokens, std::size_t begin,
           std::size_t end, std::size_t max_tokens,
           std::vector<std::vector<std::string>>* parts) {
  if (end - begin <= max_tokens) {
    parts->emplace_back(tokens.begin() + begin, tokens.begin() + end);
    return;
  }
  const std::size_t middle = begin + (end - begin) / 2;
  const auto distance = [middle](std::size_t at) {
    return at > middle ? at - middle : middle - at;
  };
  std::size_t cut = middle;  // Without a boundary: halve.
  int best_strength = 0;
  // Boundaries away from the ends first, so that a comma after the first
  // word does not leave a one-word part; then any boundary at all.
  for (const std::size_t margin : {(end - begin) / 5, std::size_t{1}}) {
    for (std::size_t i = begin + std::max<std::size_t>(margin, 1);
         i + margin <= end && i < end; ++i) {
      const int strength = BoundaryStrength(tokens, i);
      if (strength > best_strength ||
          (strength == best_strength && strength > 0 &&
           distance(i) < distance(cut))) {
        best_strength = strength;
        cut = i;
      }
    }
    if (best_strength > 0) break;
  }
  Split(tokens, begin, cut, max_tokens, parts);
  Split(tokens, cut, end, max_tokens, parts);
}

}  // namespace

std::vector<std::vector<std::string>> SplitIntoClauses(
    const std::vector<std::string>& tokens, std::size_t max_tokens) {
  if (max_tokens == 0) {
    throw std::invalid_argument("SplitIntoClauses: max_tokens must be > 0");
  }
  std::vector<std::vector<std::string>> parts;
  if (tokens.empty()) return parts;
  Split(tokens, 0, tokens.size(), max_tokens, &parts);
  return parts;
}

}  // namespace fanyi
