// What the text pipeline (TextPipeline) takes, what it hands the decoder and
// what it gives back: a request's texts and options, each text cut into
// encoded parts, and each text's translation with what happened to it.
#ifndef FANYI_COMMON_PIPELINE_TEXT_TRANSLATION_H_
#define FANYI_COMMON_PIPELINE_TEXT_TRANSLATION_H_

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/decoding/continuous_decoder.h"
#include "common/formats/marked_document.h"
#include "common/text/aligned_placeholders.h"
#include "common/text/placeholder_masker.h"
#include "common/text/script_converter.h"
#include "common/text/sentence_splitter.h"

namespace fanyi {

// What one request may ask for, at most; every surface (gRPC, HTTP) shares
// them. Larger requests are refused before any text is prepared.
struct TextLimits {
  int max_input_chars = 20000;   // Characters per text.
  int max_request_parts = 512;   // Sentences and clauses of all the texts
                                 // of a request: each takes a queue place.
  int max_glossary_terms = 256;  // Glossary and do-not-translate terms.
  int max_texts = 256;           // Texts per request.
  int default_beam_size = 4;     // For a request that asks for none (0).
  int max_beam_size = 8;         // Larger requested beams are capped.
  // How deep a document's elements may nest (HTML, a .docx's XML).
  int max_document_depth = kDefaultMaxDocumentDepth;
};

// What a text is written in. Every format but plain text is a document
// (common/formats/): its words are translated and the rest kept as it is.
enum class TextFormat {
  kText,      // Plain text: sentences and lines.
  kHtml,      // An HTML document or fragment (html_reader.h).
  kSrt,       // SubRip subtitles (srt_reader.h).
  kMarkdown,  // Markdown (markdown_reader.h).
  kOfficeXml  // An office document's XML part: .docx, .pptx, .odt, .odp
              // (office_xml_reader.h).
};

// How to translate one text, once a request's options are checked.
struct TextOptions {
  TextFormat format = TextFormat::kText;
  int beam_size = 1;  // 1 = greedy, more = beam search.
  // Other translations wanted besides the best: the next-best hypotheses
  // of the beam search (at most beam_size - 1).
  int alternatives = 0;
  // The Chinese script to answer in; unset = Simplified for a Chinese
  // target. Setting it for another target language is an error.
  std::optional<ChineseScript> script;
  // Terms with a fixed translation, or kept as written (empty target).
  std::vector<GlossaryEntry> glossary;
  // Template tokens (%s, {name}, {{x}}, &File's &, emoji ...: see
  // TemplateTokenEnd) pass through as written; false: text like any other.
  bool template_tokens = true;
};

// A request as any surface receives it, not yet checked. The texts are
// views: the caller keeps them alive while TextPipeline::Prepare runs.
struct TextRequest {
  std::vector<std::string_view> texts;
  TextFormat format = TextFormat::kText;  // Of every text.
  // How error messages name the texts: `field` ("text", "q"), followed by
  // the text's index ("texts[3]") when `indexed`.
  std::string field = "texts";
  bool indexed = true;
  // With `indexed`: the index each text is named by, when the texts are
  // some of a larger request's (the others answered elsewhere); empty:
  // its position here.
  std::vector<std::size_t> indices;
  int beam_size = 0;  // 0 = TextLimits::default_beam_size; negative: error.
  // Other translations wanted per text (negative: error); the beam grows to
  // hold them, within max_beam_size.
  int alternatives = 0;
  std::optional<ChineseScript> script;        // Unset: Simplified for Chinese.
  std::vector<GlossaryEntry> glossary;        // Terms with a fixed translation.
  std::vector<std::string> do_not_translate;  // Terms kept as written.
  bool template_tokens = true;                // TextOptions::template_tokens.
};

// A text cut into the parts the decoder takes, from TextPipeline: its
// sentences, and the clauses of sentences too long for the model, each
// encoded, with what it takes to put their translations back together.
// A plain text is one run of sentences; a document one per text of its
// MarkedDocument (none when it has nothing to translate).
struct PreparedText {
  // One per part, in text order; what the decoder gets.
  std::vector<EncodedSource> parts;
  // Each run's sentences and the gaps between.
  std::vector<SplitText> runs;
  // The sentence each part belongs to, counted over all runs in order.
  std::vector<int> sentence_of_part;
  // For a document: what its runs are written back into.
  std::shared_ptr<const MarkedDocument> document;
  // Per part: what its placeholders ｟1｠, ｟2｠, ... become.
  std::vector<std::vector<std::string>> restorations;
  // Per part, for a model that never learned placeholders (its parts
  // align: EncodedSource::align): the source pieces decoded, which its
  // unknown target pieces are replaced by, and the placeholders taken out
  // of them, put back by alignment. Empty for other models.
  std::vector<std::vector<std::string>> source_pieces;
  std::vector<std::vector<PlaceholderAnchor>> anchors;
  // Sentences with nothing to translate once their spans are masked (no
  // letters: template tokens, numbers, symbols), by index over all runs:
  // they take no part and come back as written, glossary terms replaced.
  std::map<int, std::string> verbatim_sentences;
  std::optional<ChineseScript> script;  // For a Chinese target.
  int beam_size = 1;                    // Every part's.
  int alternatives = 0;                 // Other translations wanted.
  int split_sentence_count = 0;         // Sentences cut into clauses.
  // Source words the vocabulary lacks, as written; they pass through.
  std::vector<std::string> unknown_words;
  int source_token_count = 0;  // Over all parts.
};

// What the decoder gave for one part of a PreparedText: its target ids
// (without </s>), next-best hypotheses and log-probability. Its handle
// means nothing to the assembler.
using DecodedPart = ContinuousDecoder::Finished;

// A text's translation, with what happened to it on the way.
struct TextTranslation {
  std::string text;
  // How sure the model was of `text`: e^(mean log-probability per token)
  // over every decoded part, </s> included (the geometric mean of the
  // tokens' probabilities), in [0, 1]. 1 for a text with nothing decoded
  // (template tokens or numbers only, sent back as written).
  double confidence = 1;
  // Other translations, distinct from `text` and each other, best first:
  // each part's next-best hypotheses in turn (TextOptions::alternatives).
  std::vector<std::string> alternatives;
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
  // Unknown tokens (<unk>) the model generated and no source piece
  // replaced (a model without placeholders replaces each by the source
  // piece it attended to most): dropped, never shown.
  int dropped_unknown_count = 0;
  // Parts (sentences, clauses) whose first translation OutputGuard found
  // broken, and of those, the ones whose second decoding was kept.
  int broken_part_count = 0;
  int repaired_part_count = 0;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_TEXT_TRANSLATION_H_
