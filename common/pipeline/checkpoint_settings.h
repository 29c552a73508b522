// What the text pipeline reads from a checkpoint, checked: the placeholders
// its vocabularies hold, the sentence length it translates whole, its source
// script and the prefixes every part starts with.
#ifndef FANYI_COMMON_PIPELINE_CHECKPOINT_SETTINGS_H_
#define FANYI_COMMON_PIPELINE_CHECKPOINT_SETTINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/decoding/decoding_options.h"
#include "common/text/script_converter.h"

namespace fanyi {

struct Checkpoint;

// How many placeholders a sentence may hold: ｟1｠ ... ｟k｠ must all be
// tokens of both vocabularies, or the model never learned to carry them.
int KnownPlaceholders(const Checkpoint& checkpoint);

// Sentences longer than this many tokens are translated in clauses:
// `requested`, or for 0 what the model does well, leaving room for the
// source prefix. Throws std::invalid_argument for a negative `requested`.
int MaxSentenceTokens(const Checkpoint& checkpoint,
                      const DecodingOptions& decoding, int requested);

// For a Chinese source trained in Simplified: what brings input to it.
std::optional<ScriptConverter> SourceToSimplified(const Checkpoint& checkpoint);

// The ids of the checkpoint's target prefix. Throws std::invalid_argument
// for a token the target vocabulary lacks.
std::vector<int64_t> TargetPrefixIds(const Checkpoint& checkpoint);

// The checkpoint's source prefix, checked: std::invalid_argument for a
// token the source vocabulary lacks.
std::vector<std::string> SourcePrefix(const Checkpoint& checkpoint);

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_CHECKPOINT_SETTINGS_H_
