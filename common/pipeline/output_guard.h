#ifndef FANYI_COMMON_PIPELINE_OUTPUT_GUARD_H_
#define FANYI_COMMON_PIPELINE_OUTPUT_GUARD_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/decoding_options.h"
#include "common/pipeline/text_translation.h"
#include "common/text/vocabulary.h"

namespace fanyi {

// How a translation went wrong, in the ways a sequence model's do.
enum class BrokenOutput {
  kNone,
  kRepeats,   // A loop: "百分数百分数百分数", "的的的的".
  kTooLong,   // Longer than the model's training pairs ever are for its
              // source, or cut by the decoder's length cap.
  kTooShort,  // Shorter than they ever are: the sentence was dropped.
  kCopied,    // The source's words copied through instead of translated.
};

// Its name in metrics and logs: "repeats", "too_long", ... ("" for kNone).
std::string BrokenOutputName(BrokenOutput broken);

// Target tokens per source token in a model's training pairs, between two
// percentiles (Checkpoint::target_ratio_low and _high): a translation far
// outside them went wrong. `high` 0 when unknown; `low` 0 for no lower
// bound.
struct LengthRatio {
  double low = 0;
  double high = 0;
};

// What the guard found of one part, and what became of it.
struct GuardVerdict {
  BrokenOutput broken = BrokenOutput::kNone;
  bool kept_retry = false;  // Decoded again, and the retry kept.
};

// Adds `verdict` to `translation`'s broken_part_count and
// repaired_part_count.
void CountVerdict(const GuardVerdict& verdict, TextTranslation* translation);

// Checks each decoded part for a broken translation, and says how to decode
// it again: a loop or an overlong translation as a beam search that
// repeats no 3-gram; any other as a wider beam. The retry is kept when it
// is not broken, or is more likely per token. Inspect compares token ids
// only (words are looked up once, when the guard is made), in time linear
// in the part's tokens. Thread-safe: every method is const.
class OutputGuard {
 public:
  // Repeated n-grams are looked for up to this size.
  static constexpr int kLongestLoop = 8;
  // The retry's beam, at least, and the n-gram size it never repeats.
  static constexpr int kRetryBeam = 4;
  static constexpr int kRetryNoRepeatNgram = 3;
  // Sources shorter than this many tokens are not length-checked: their
  // ratios vary too much.
  static constexpr int kShortestRatioChecked = 5;

  // `enabled` false: Inspect still inspects, but callers decode nothing
  // again (enabled()).
  OutputGuard(const Vocabulary& source_vocabulary,
              const Vocabulary& target_vocabulary, LengthRatio ratio,
              const DecodingOptions& decoding, bool enabled);

  // Whether broken parts are to be decoded again.
  bool enabled() const { return enabled_; }

  // What is wrong with `part`, the translation of `source`: kNone when
  // nothing is.
  BrokenOutput Inspect(const EncodedSource& source,
                       const DecodedPart& part) const;

  // `source` as it is decoded again after a `broken` translation, with a
  // beam of at most `max_beam`; none when that would decode it as before
  // (a wider beam was the only change, and it is as wide already).
  static std::optional<EncodedSource> Retry(const EncodedSource& source,
                                            BrokenOutput broken, int max_beam);

  // Which of a broken first translation and its retry (of `source`) to
  // keep: the retry unless it is broken too and less likely per token.
  bool KeepsRetry(const EncodedSource& source, const DecodedPart& first,
                  const DecodedPart& retry) const;

 private:
  bool CopiesSource(const EncodedSource& source,
                    const std::vector<int64_t>& target_ids) const;

  // Per token id, the index of the word it is (shared by both sides), or
  // -1 for a token that is no word (WordOf).
  std::vector<int32_t> source_words_;
  std::vector<int32_t> target_words_;
  const LengthRatio ratio_;
  const DecodingOptions decoding_;
  const bool enabled_;
};

// True when `ids` holds 4 copies of one token in a row, or 3 of an n-gram
// of 2 to OutputGuard::kLongestLoop tokens.
bool HasLoop(const std::vector<int64_t>& ids);

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_OUTPUT_GUARD_H_
