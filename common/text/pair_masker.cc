#include "common/text/pair_masker.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// A number's digits alone ("1,000" -> "1000"), or "" when it holds anything
// other than digits and separators (codes must match as written).
std::string DigitsOfNumber(const std::string& number) {
  std::string digits;
  for (char c : number) {
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
    } else if (c != ',' && c != '.' && c != ' ') {
      return "";
    }
  }
  return digits;
}

bool SameSpan(const std::string& source, SpanKind source_kind,
              const std::string& target, SpanKind target_kind) {
  if (source == target) return true;
  if (source_kind != SpanKind::kNumber || target_kind != SpanKind::kNumber) {
    return false;
  }
  const std::string digits = DigitsOfNumber(source);
  return !digits.empty() && digits == DigitsOfNumber(target);
}

}  // namespace

PairMasker::PairMasker(int max_placeholders)
    : max_placeholders_(max_placeholders) {
  if (max_placeholders < 0) {
    throw std::invalid_argument("max_placeholders must not be negative");
  }
}

MaskedPair PairMasker::Mask(std::string_view source, std::string_view target,
                            int first_index) const {
  const std::u32string source_text = DecodeUtf8(source);
  const std::u32string target_text = DecodeUtf8(target);
  const std::vector<Span> target_spans = finder_.Find(target_text);
  std::vector<bool> used(target_spans.size(), false);
  // Pairs of (source span, target span), in source order.
  std::vector<Span> source_masked;
  std::vector<std::pair<Span, int>> target_masked;  // With the index.
  for (const Span& span : finder_.Find(source_text)) {
    if (first_index + static_cast<int>(source_masked.size()) >=
        max_placeholders_) {
      break;
    }
    const std::string written = SpanText(source_text, span);
    for (std::size_t t = 0; t < target_spans.size(); ++t) {
      if (used[t] || (span.kind == SpanKind::kWord) !=
                         (target_spans[t].kind == SpanKind::kWord)) {
        continue;
      }
      if (SameSpan(written, span.kind, SpanText(target_text, target_spans[t]),
                   target_spans[t].kind)) {
        used[t] = true;
        source_masked.push_back(span);
        target_masked.emplace_back(target_spans[t],
                                   static_cast<int>(source_masked.size()));
        break;
      }
    }
  }
  std::sort(target_masked.begin(), target_masked.end(),
            [](const auto& a, const auto& b) {
              return a.first.begin < b.first.begin;
            });
  std::string masked_target;
  std::size_t at = 0;
  for (const auto& [span, index] : target_masked) {
    masked_target += EncodeUtf8(
        std::u32string_view(target_text).substr(at, span.begin - at));
    masked_target += PlaceholderToken(first_index + index);
    at = span.end;
  }
  masked_target += EncodeUtf8(std::u32string_view(target_text).substr(at));
  return {ReplaceSpans(source_text, source_masked, first_index), masked_target,
          static_cast<int>(source_masked.size())};
}

}  // namespace fanyi
