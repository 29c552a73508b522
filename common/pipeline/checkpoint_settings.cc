#include "common/pipeline/checkpoint_settings.h"

#include <algorithm>
#include <stdexcept>

#include "common/model/checkpoint.h"
#include "common/text/placeholders.h"
#include "common/text/vocabulary.h"

namespace fanyi {
namespace {

// The longest sentence to translate whole: what the model trained on, and
// short enough that the length cap leaves its translation room to end.
int DefaultMaxSentenceTokens(const Checkpoint& checkpoint,
                             const DecodingOptions& decoding) {
  int64_t longest = checkpoint.model->config().MaxSourceTokens();
  if (decoding.length_ratio > 0) {
    longest = std::min<int64_t>(
        longest,
        static_cast<int64_t>((decoding.max_length - decoding.length_offset) /
                             decoding.length_ratio));
  }
  if (checkpoint.longest_source_tokens > 0) {
    longest = std::min(longest, checkpoint.longest_source_tokens);
  }
  return static_cast<int>(std::max<int64_t>(longest, 8));
}

}  // namespace

int KnownPlaceholders(const Checkpoint& checkpoint) {
  int known = 0;
  while (true) {
    const std::string token = PlaceholderToken(known + 1);
    if (checkpoint.source_vocabulary.Id(token) == Vocabulary::kUnkId ||
        checkpoint.target_vocabulary.Id(token) == Vocabulary::kUnkId) {
      return known;
    }
    ++known;
  }
}

int MaxSentenceTokens(const Checkpoint& checkpoint,
                      const DecodingOptions& decoding, int requested) {
  if (requested < 0) {
    throw std::invalid_argument("max_sentence_tokens must not be negative");
  }
  // Room for the source prefix, which every part starts with.
  const auto prefix = static_cast<int64_t>(checkpoint.source_prefix.size());
  const int64_t max_source = std::max<int64_t>(
      checkpoint.model->config().MaxSourceTokens() - prefix, 1);
  return requested > 0
             ? static_cast<int>(std::min<int64_t>(requested, max_source))
             : static_cast<int>(std::min<int64_t>(
                   DefaultMaxSentenceTokens(checkpoint, decoding), max_source));
}

std::optional<ScriptConverter> SourceToSimplified(
    const Checkpoint& checkpoint) {
  if (IsChineseLanguage(checkpoint.source_language) &&
      checkpoint.source_script == "simplified") {
    return ScriptConverter(ChineseScript::kSimplified);
  }
  return std::nullopt;
}

std::vector<int64_t> TargetPrefixIds(const Checkpoint& checkpoint) {
  std::vector<int64_t> ids;
  for (const std::string& token : checkpoint.target_prefix) {
    const int64_t id = checkpoint.target_vocabulary.Id(token);
    if (checkpoint.target_vocabulary.Token(id) != token) {
      throw std::invalid_argument("target prefix \"" + token +
                                  "\" is not in the target vocabulary");
    }
    ids.push_back(id);
  }
  return ids;
}

std::vector<std::string> SourcePrefix(const Checkpoint& checkpoint) {
  for (const std::string& token : checkpoint.source_prefix) {
    const int64_t id = checkpoint.source_vocabulary.Id(token);
    if (checkpoint.source_vocabulary.Token(id) != token ||
        id <= Vocabulary::kEosId) {
      throw std::invalid_argument("source prefix \"" + token +
                                  "\" is not an ordinary token of the source "
                                  "vocabulary");
    }
  }
  if (static_cast<int64_t>(checkpoint.source_prefix.size()) >=
      checkpoint.model->config().MaxSourceTokens()) {
    throw std::invalid_argument(
        "the source prefix leaves no room for a source in the model's " +
        std::to_string(checkpoint.model->config().MaxSourceTokens()) +
        " tokens");
  }
  return checkpoint.source_prefix;
}

}  // namespace fanyi
