// What the Translator needs to translate a whole text (a paragraph, a
// document) and what it reports about it.
#ifndef FANYI_COMMON_DECODING_TEXT_TRANSLATION_H_
#define FANYI_COMMON_DECODING_TEXT_TRANSLATION_H_

#include <optional>
#include <string>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/text/placeholders.h"
#include "common/text/script_converter.h"
#include "common/text/sentence_splitter.h"

namespace fanyi {

// How to translate one text.
struct TextOptions {
  int beam_size = 1;  // 1 = greedy, more = beam search.
  // The Chinese script to answer in; unset = Simplified for a Chinese
  // target. Setting it for another target language is an error.
  std::optional<ChineseScript> script;
  // Terms with a fixed translation, or kept as written (empty target).
  std::vector<GlossaryEntry> glossary;
};

// A text cut into the parts the decoder takes, from Translator::Prepare:
// its sentences, and the clauses of sentences too long for the model, each
// encoded, with what it takes to put their translations back together.
struct PreparedText {
  // One per part, in text order; what the decoder gets.
  std::vector<EncodedSource> parts;
  SplitText layout;                   // Sentences and the gaps between.
  std::vector<int> sentence_of_part;  // The sentence each part belongs to.
  // Per part: what its placeholders ｟1｠, ｟2｠, ... become.
  std::vector<std::vector<std::string>> restorations;
  std::optional<ChineseScript> script;  // For a Chinese target.
  int split_sentence_count = 0;         // Sentences cut into clauses.
  // Source words the vocabulary lacks, as written; they pass through.
  std::vector<std::string> unknown_words;
  int source_token_count = 0;  // Over all parts.
};

// A text's translation, with what happened to it on the way.
struct TextTranslation {
  std::string text;
  int sentence_count = 0;
  int split_sentence_count = 0;  // Translated in clauses (too long).
  // Parts whose translation reached the length cap and may be incomplete.
  int capped_part_count = 0;
  std::vector<std::string> unknown_words;
  // Spans carried by placeholders (numbers, codes, glossary terms, ...).
  int span_count = 0;
  // Of those, the ones the model left out, appended to their sentence
  // instead.
  int unplaced_span_count = 0;
  int source_token_count = 0;
  int generated_token_count = 0;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_DECODING_TEXT_TRANSLATION_H_
