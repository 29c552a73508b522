#include "common/pipeline/output_guard.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// Of the source's words, at least this many and this share coming through
// verbatim make a copy: names alone do not ("Install Docker Desktop on
// Windows" copies 3 of 5).
constexpr int kFewestCopiedWords = 3;
constexpr double kCopiedShare = 0.75;

// A token as a word, lowercased, without the subword marks ("▁" before,
// "@@" after); "" when it is no word: fewer than two characters, or any
// that is not a letter or digit (placeholders, punctuation), or digits only.
std::string WordOf(std::string_view token) {
  constexpr std::string_view kWordStart = "\xE2\x96\x81";  // "▁"
  if (token.substr(0, kWordStart.size()) == kWordStart) {
    token.remove_prefix(kWordStart.size());
  }
  if (token.size() >= 2 && token.substr(token.size() - 2) == "@@") {
    token.remove_suffix(2);
  }
  const std::u32string characters = DecodeUtf8(token);
  if (characters.size() < 2) return "";
  bool letters = false;
  for (char32_t c : characters) {
    if (!IsLetterOrDigit(c)) return "";
    letters = letters || !IsAsciiDigit(c);
  }
  return letters ? AsciiLowercase(token) : "";
}

// Per token of `vocabulary`, the index in `words` of the word it is,
// adding it; -1 for a token that is no word.
std::vector<int32_t> WordIndices(
    const Vocabulary& vocabulary,
    std::unordered_map<std::string, int32_t>* words) {
  std::vector<int32_t> indices(static_cast<size_t>(vocabulary.size()), -1);
  for (int64_t id = 0; id < vocabulary.size(); ++id) {
    std::string word = WordOf(vocabulary.Token(id));
    if (word.empty()) continue;
    const auto next = static_cast<int32_t>(words->size());
    indices[static_cast<size_t>(id)] =
        words->emplace(std::move(word), next).first->second;
  }
  return indices;
}

// The distinct words of `ids` by `indices` (ids out of range are none),
// sorted.
std::vector<int32_t> DistinctWords(const std::vector<int64_t>& ids,
                                   const std::vector<int32_t>& indices) {
  std::vector<int32_t> words;
  for (int64_t id : ids) {
    if (id < 0 || id >= static_cast<int64_t>(indices.size())) continue;
    if (indices[static_cast<size_t>(id)] >= 0) {
      words.push_back(indices[static_cast<size_t>(id)]);
    }
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

}  // namespace

std::string BrokenOutputName(BrokenOutput broken) {
  switch (broken) {
    case BrokenOutput::kNone:
      return "";
    case BrokenOutput::kRepeats:
      return "repeats";
    case BrokenOutput::kTooLong:
      return "too_long";
    case BrokenOutput::kTooShort:
      return "too_short";
    case BrokenOutput::kCopied:
      return "copied";
  }
  return "";
}

void CountVerdict(const GuardVerdict& verdict, TextTranslation* translation) {
  if (verdict.broken == BrokenOutput::kNone) return;
  ++translation->broken_part_count;
  if (verdict.kept_retry) ++translation->repaired_part_count;
}

bool HasLoop(const std::vector<int64_t>& ids) {
  const auto length = static_cast<int64_t>(ids.size());
  for (int64_t n = 1; n <= OutputGuard::kLongestLoop; ++n) {
    // `same` counts positions in a row equal to the one n before: k copies
    // of an n-gram make (k - 1) · n of them.
    const int64_t copies = n == 1 ? 4 : 3;
    int64_t same = 0;
    for (int64_t j = n; j < length; ++j) {
      same = ids[j] == ids[j - n] ? same + 1 : 0;
      if (same >= (copies - 1) * n) return true;
    }
  }
  return false;
}

OutputGuard::OutputGuard(const Vocabulary& source_vocabulary,
                         const Vocabulary& target_vocabulary, LengthRatio ratio,
                         const DecodingOptions& decoding, bool enabled)
    : ratio_(ratio), decoding_(decoding), enabled_(enabled) {
  std::unordered_map<std::string, int32_t> words;
  source_words_ = WordIndices(source_vocabulary, &words);
  target_words_ = WordIndices(target_vocabulary, &words);
}

BrokenOutput OutputGuard::Inspect(const EncodedSource& source,
                                  const DecodedPart& part) const {
  const std::vector<int64_t>& target = part.target_ids;
  const auto source_length = static_cast<int64_t>(source.ids.size());
  const auto target_length = static_cast<int64_t>(target.size());
  // A loop the source does not have ("very very very" may stay one).
  if (HasLoop(target) && !HasLoop(source.ids)) return BrokenOutput::kRepeats;
  if (target_length >= MaxTargetLength(decoding_, source_length)) {
    return BrokenOutput::kTooLong;
  }
  if (ratio_.high > 0 && source_length >= kShortestRatioChecked) {
    const double ratio =
        static_cast<double>(target_length) / static_cast<double>(source_length);
    if (ratio > ratio_.high) return BrokenOutput::kTooLong;
    if (ratio < ratio_.low) return BrokenOutput::kTooShort;
  }
  if (CopiesSource(source, target)) return BrokenOutput::kCopied;
  return BrokenOutput::kNone;
}

bool OutputGuard::CopiesSource(const EncodedSource& source,
                               const std::vector<int64_t>& target_ids) const {
  const std::vector<int32_t> target = DistinctWords(target_ids, target_words_);
  if (static_cast<int>(target.size()) < kFewestCopiedWords) return false;
  const std::vector<int32_t> source_words =
      DistinctWords(source.ids, source_words_);
  std::vector<int32_t> copied;
  std::set_intersection(source_words.begin(), source_words.end(),
                        target.begin(), target.end(),
                        std::back_inserter(copied));
  const auto count = static_cast<double>(copied.size());
  return count >= kFewestCopiedWords &&
         count >= kCopiedShare * static_cast<double>(source_words.size());
}

std::optional<EncodedSource> OutputGuard::Retry(const EncodedSource& source,
                                                BrokenOutput broken,
                                                int max_beam) {
  EncodedSource retry = source;
  retry.beam_size =
      std::max(source.beam_size, std::min(kRetryBeam, std::max(max_beam, 1)));
  // Forbidding repeats mends loops, and the long translations that are
  // mostly loops too long to be seen as such; it does nothing for a
  // dropped or copied sentence, which only a wider search may mend.
  if (broken == BrokenOutput::kRepeats || broken == BrokenOutput::kTooLong) {
    retry.no_repeat_ngram = kRetryNoRepeatNgram;
  } else if (retry.beam_size == source.beam_size) {
    return std::nullopt;
  }
  return retry;
}

bool OutputGuard::KeepsRetry(const EncodedSource& source,
                             const DecodedPart& first,
                             const DecodedPart& retry) const {
  if (Inspect(source, retry) == BrokenOutput::kNone) return true;
  const auto per_token = [](const DecodedPart& part) {
    return part.scored_tokens > 0
               ? part.log_probability / static_cast<double>(part.scored_tokens)
               : 0.0;
  };
  return per_token(retry) > per_token(first);
}

}  // namespace fanyi
