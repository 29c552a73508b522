// Placeholders in the tokens of a sentence's parts: numbered per part, and
// for a model trained without placeholders, kept out of its tokenization and
// of clauses of their own.
#ifndef FANYI_COMMON_PIPELINE_PART_PLACEHOLDERS_H_
#define FANYI_COMMON_PIPELINE_PART_PLACEHOLDERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/text/tokenizer.h"
#include "common/text/vocabulary_lookup.h"

namespace fanyi {

// `tokens` with its placeholders numbered from 1 in order of appearance;
// `restorations` gets what each becomes, from `sentence_restorations`.
std::vector<std::string> RenumberPlaceholders(
    std::vector<std::string> tokens,
    const std::vector<std::string>& sentence_restorations,
    std::vector<std::string>* restorations);

// The tokens of `text` (normalized by `lookup`) for a model that never
// learned placeholders, which sees none (TakeOutPlaceholders): each stretch
// between them tokenized as a text of its own, trimmed, so that its pieces
// are those of the text without them; the placeholders as tokens between.
std::vector<std::string> TokenizeAroundPlaceholders(
    const Tokenizer& tokenizer, const VocabularyLookup& lookup,
    std::string_view text);

// `clauses` with each one of placeholders only joined to the clause before
// it (the first to the one after): for a model without placeholders,
// which reads none of them, such a clause would be an empty source.
std::vector<std::vector<std::string>> JoinPlaceholderClauses(
    std::vector<std::vector<std::string>> clauses);

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_PART_PLACEHOLDERS_H_
