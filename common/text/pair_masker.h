#ifndef FANYI_COMMON_TEXT_PAIR_MASKER_H_
#define FANYI_COMMON_TEXT_PAIR_MASKER_H_

#include <string>
#include <string_view>

#include "common/text/span_finder.h"

namespace fanyi {

// A training pair with the spans both sides share replaced.
struct MaskedPair {
  std::string source;
  std::string target;
  int spans = 0;  // Placeholders in each side.
};

// Masks training pairs so that the model learns to carry placeholders
// across: the source spans (SpanFinder's, no glossary) that the target also
// has, written the same, or for numbers with the same digits ("1,000" and
// "1000"), and Latin words the target copies ("iPhone"), each with one
// placeholder on both sides. Spans the target lacks stay as text.
// Thread-safe: const.
class PairMasker {
 public:
  // Throws std::invalid_argument for a negative `max_placeholders`.
  explicit PairMasker(int max_placeholders);

  // Masks `source` and `target` (valid UTF-8). The spans are numbered from
  // `first_index` + 1, up to max_placeholders, so that training can spread
  // them over every index a sentence may use.
  MaskedPair Mask(std::string_view source, std::string_view target,
                  int first_index = 0) const;

 private:
  const SpanFinder finder_;
  const int max_placeholders_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_PAIR_MASKER_H_
