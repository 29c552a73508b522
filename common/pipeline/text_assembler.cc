#include "common/pipeline/text_assembler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "common/model/checkpoint.h"
#include "common/text/placeholders.h"
#include "common/text/sentence_splitter.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// For a Chinese target, a converter per script it can be written in.
std::map<ChineseScript, ScriptConverter> TargetConverters(
    const Checkpoint& checkpoint) {
  std::map<ChineseScript, ScriptConverter> converters;
  if (IsChineseLanguage(checkpoint.target_language)) {
    for (ChineseScript script :
         {ChineseScript::kSimplified, ChineseScript::kTraditionalTaiwan,
          ChineseScript::kTraditionalHongKong}) {
      converters.emplace(script, ScriptConverter(script));
    }
  }
  return converters;
}

// Sentence-final punctuation, in either script.
bool IsFinalPunctuation(char32_t c) {
  return c == '.' || c == '!' || c == '?' || c == U'。' || c == U'！' ||
         c == U'？';
}

// A document's text as its source ends: the model learnt from whole
// sentences and ends most translations with a full stop, which a fragment
// without one (a table cell, a bold word, a heading) must not get.
std::string EndLikeSource(std::string_view source, std::string translation) {
  const std::u32string ending = DecodeUtf8(source);
  const auto last = std::find_if(ending.rbegin(), ending.rend(),
                                 [](char32_t c) { return !IsSpace(c); });
  if (last == ending.rend() || IsFinalPunctuation(*last) || *last == U'…' ||
      InlineMarkerIndex(*last) >= 0) {
    return translation;
  }
  std::u32string text = DecodeUtf8(translation);
  while (!text.empty() && IsFinalPunctuation(text.back())) text.pop_back();
  return EncodeUtf8(text);
}

}  // namespace

TextAssembler::TextAssembler(const Checkpoint& checkpoint,
                             const DecodingOptions& decoding)
    : target_vocabulary_(checkpoint.target_vocabulary),
      target_tokenizer_(checkpoint.target_language, checkpoint.target_subwords,
                        checkpoint.target_case),
      converters_(TargetConverters(checkpoint)),
      decoding_(decoding) {}

TextTranslation TextAssembler::Assemble(
    const PreparedText& text, const std::vector<DecodedPart>& parts) const {
  if (parts.size() != text.parts.size()) {
    throw std::invalid_argument("Assemble: " + std::to_string(parts.size()) +
                                " targets for " +
                                std::to_string(text.parts.size()) + " parts");
  }
  TextTranslation translation;
  for (const SplitText& run : text.runs) {
    translation.sentence_count += static_cast<int>(run.sentences.size());
  }
  translation.split_sentence_count = text.split_sentence_count;
  translation.unknown_words = text.unknown_words;
  translation.source_token_count = text.source_token_count;
  // Chinese is written without spaces between clauses and sentences.
  const std::string separator = target_tokenizer_.character_mode() ? "" : " ";
  std::vector<std::string> sentences(translation.sentence_count);
  for (const auto& [index, verbatim] : text.verbatim_sentences) {
    sentences.at(index) = verbatim;
  }
  double log_probability = 0;
  int64_t scored_tokens = 0;
  for (std::size_t part = 0; part < text.parts.size(); ++part) {
    std::string& sentence = sentences[text.sentence_of_part[part]];
    const std::string clause =
        AssemblePart(text, part, parts[part], &translation);
    if (!sentence.empty() && !clause.empty()) sentence += separator;
    sentence += clause;
    log_probability += parts[part].log_probability;
    scored_tokens += parts[part].scored_tokens;
  }
  if (scored_tokens > 0) {
    // NaN logits, or a log-sum-exp rounded a hair below the chosen logit,
    // must not leave [0, 1].
    const double mean = log_probability / static_cast<double>(scored_tokens);
    translation.confidence =
        std::isnan(mean) ? 0.0 : std::clamp(std::exp(mean), 0.0, 1.0);
  }
  std::vector<std::string> runs;
  auto first = sentences.begin();
  for (const SplitText& run : text.runs) {
    const auto last = first + static_cast<std::ptrdiff_t>(run.sentences.size());
    runs.push_back(
        JoinSentences(run, std::vector<std::string>(first, last), separator));
    if (text.document != nullptr) {
      runs.back() = EndLikeSource(text.document->texts().at(runs.size() - 1),
                                  std::move(runs.back()));
    }
    first = last;
  }
  translation.text =
      text.document != nullptr ? text.document->Render(runs) : runs.at(0);
  return translation;
}

std::vector<std::string> TextAssembler::AssembleAlternatives(
    const PreparedText& text, const std::vector<DecodedPart>& parts,
    const std::string& best) const {
  std::vector<std::string> alternatives;
  if (text.alternatives == 0 || parts.size() != text.parts.size()) {
    return alternatives;
  }
  // The k-th alternative of a text takes each part's k-th next-best
  // hypothesis (its best where it has fewer); one equal to the best or to
  // an earlier one, as detokenized, is no alternative.
  for (int k = 0; k < text.alternatives; ++k) {
    std::vector<DecodedPart> targets;
    bool changed = false;
    for (const DecodedPart& part : parts) {
      DecodedPart& target = targets.emplace_back();
      target.handle = part.handle;
      target.target_ids = part.target_ids;
      target.source_positions = part.source_positions;
      if (static_cast<int>(part.alternatives.size()) > k) {
        target.target_ids = part.alternatives[k];
        target.source_positions =
            static_cast<int>(part.alternative_positions.size()) > k
                ? part.alternative_positions[k]
                : std::vector<int32_t>();
        changed = true;
      }
    }
    if (!changed) break;
    std::string other = Assemble(text, targets).text;
    if (other != best && std::find(alternatives.begin(), alternatives.end(),
                                   other) == alternatives.end()) {
      alternatives.push_back(std::move(other));
    }
  }
  return alternatives;
}

std::string TextAssembler::AssemblePart(const PreparedText& text,
                                        std::size_t part,
                                        const DecodedPart& decoded,
                                        TextTranslation* translation) const {
  const std::vector<int64_t>& target_ids = decoded.target_ids;
  translation->generated_token_count += static_cast<int>(target_ids.size());
  if (static_cast<int64_t>(target_ids.size()) >=
      MaxTargetLength(decoding_, text.parts[part].ids.size())) {
    ++translation->capped_part_count;
  }
  // A part that aligns (its model never learned placeholders) has its
  // source pieces and where each target piece attended.
  const bool aligned = part < text.source_pieces.size() &&
                       part < text.anchors.size() &&
                       decoded.source_positions.size() == target_ids.size();
  const std::vector<std::string> no_pieces;
  const std::vector<std::string>& source_pieces =
      aligned ? text.source_pieces[part] : no_pieces;
  // A generated <unk> becomes the source piece it attended to most (as
  // CTranslate2's replace_unknowns, which argos-translate asks for);
  // without one it says only that the model had no word, and is dropped
  // (and counted) rather than shown.
  std::vector<std::string> pieces;
  std::vector<int32_t> positions;
  pieces.reserve(target_ids.size());
  for (std::size_t t = 0; t < target_ids.size(); ++t) {
    const int32_t position = aligned ? decoded.source_positions[t] : 0;
    // As Vocabulary::Decode reads ids.
    if (target_ids[t] == Vocabulary::kEosId) break;
    if (target_ids[t] == Vocabulary::kPadId ||
        target_ids[t] == Vocabulary::kBosId) {
      continue;
    }
    if (target_ids[t] != Vocabulary::kUnkId) {
      pieces.push_back(target_vocabulary_.Token(target_ids[t]));
    } else if (position >= 0 &&
               position < static_cast<int32_t>(source_pieces.size())) {
      pieces.push_back(source_pieces[position]);
    } else {
      ++translation->dropped_unknown_count;
      continue;
    }
    positions.push_back(position);
  }
  if (aligned) {
    pieces = PutBackPlaceholders(pieces, positions, text.anchors[part],
                                 target_tokenizer_.subwords() != nullptr);
  }
  std::string detokenized = target_tokenizer_.Detokenize(pieces);
  // Converted before the spans return, so that they stay as written.
  if (text.script)
    detokenized = converters_.at(*text.script).Convert(detokenized);
  RestoredText restored =
      RestorePlaceholders(detokenized, text.restorations[part]);
  translation->span_count += static_cast<int>(text.restorations[part].size());
  translation->unplaced_span_count += restored.unplaced;
  return restored.text;
}

}  // namespace fanyi
