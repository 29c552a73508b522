#include "common/text/placeholder_masker.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

std::vector<std::string> GlossarySources(
    const std::vector<GlossaryEntry>& glossary) {
  std::vector<std::string> sources;
  for (const GlossaryEntry& entry : glossary) sources.push_back(entry.source);
  return sources;
}

}  // namespace

PlaceholderMasker::PlaceholderMasker(std::vector<GlossaryEntry> glossary,
                                     int max_placeholders, bool template_tokens)
    : glossary_(std::move(glossary)),
      finder_(GlossarySources(glossary_), template_tokens),
      max_placeholders_(max_placeholders) {
  if (max_placeholders < 0) {
    throw std::invalid_argument("max_placeholders must not be negative");
  }
}

MaskedSentence PlaceholderMasker::Mask(
    std::string_view sentence, const VocabularyLookup* vocabulary) const {
  const std::u32string text = DecodeUtf8(sentence);
  // Inline markers, template tokens and placeholder forms written in the
  // text always: a document's tags must come back, a program's %s too, and
  // a literal ｟1｠ must neither read as the model's placeholder nor vanish;
  // one past the model's placeholders
  // still comes back (as an unknown token the model leaves out, appended to
  // the sentence). Then glossary terms, URLs, addresses and numbers;
  // unknown words take the placeholders left.
  const std::vector<Span> spans = finder_.Find(text);
  const auto always = [](const Span& span) {
    return span.kind == SpanKind::kMarkup || span.kind == SpanKind::kLiteral ||
           span.kind == SpanKind::kTemplate;
  };
  std::vector<Span> masked;
  std::copy_if(spans.begin(), spans.end(), std::back_inserter(masked), always);
  std::vector<Span> unknown;
  for (const Span& span : spans) {
    if (always(span)) continue;
    if (span.kind != SpanKind::kWord) {
      if (static_cast<int>(masked.size()) < max_placeholders_) {
        masked.push_back(span);
      }
    } else if (vocabulary != nullptr &&
               vocabulary->IsUnknown(SpanText(text, span))) {
      unknown.push_back(span);
    }
  }
  MaskedSentence result;
  for (const Span& span : unknown) {
    result.unknown_words.push_back(SpanText(text, span));
    if (static_cast<int>(masked.size()) < max_placeholders_) {
      masked.push_back(span);
    }
  }
  std::sort(masked.begin(), masked.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  for (const Span& span : masked) {
    const bool translated = span.kind == SpanKind::kGlossary &&
                            !glossary_[span.glossary_entry].target.empty();
    result.restorations.push_back(translated
                                      ? glossary_[span.glossary_entry].target
                                      : SpanText(text, span));
  }
  result.text = ReplaceSpans(text, masked);
  return result;
}

}  // namespace fanyi
