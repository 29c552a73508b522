// Cutting a sentence that is too long for the model into clauses.
#ifndef FANYI_COMMON_TEXT_CLAUSE_SPLITTER_H_
#define FANYI_COMMON_TEXT_CLAUSE_SPLITTER_H_

#include <cstddef>
#include <string>
#include <vector>

namespace fanyi {

// Splits the tokens of one sentence into consecutive parts of at most
// `max_tokens` tokens each, cutting at the strongest boundary available:
// after `;` or `:`, then after `,`, then before a conjunction ("and",
// "but", "because", "which", ...), and only as a last resort anywhere. Among
// boundaries of one strength it takes the one nearest the middle, and
// splits again parts that are still too long. A sentence that fits comes
// back whole. Throws std::invalid_argument when `max_tokens` is 0.
std::vector<std::vector<std::string>> SplitIntoClauses(
    const std::vector<std::string>& tokens, std::size_t max_tokens);

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_CLAUSE_SPLITTER_H_
