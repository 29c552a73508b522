#include "common/pipeline/text_pipeline.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <stdexcept>
#include <utility>

#include "common/formats/marked_document.h"
#include "common/model/checkpoint.h"
#include "common/pipeline/checkpoint_settings.h"
#include "common/pipeline/documents.h"
#include "common/pipeline/part_placeholders.h"
#include "common/text/aligned_placeholders.h"
#include "common/text/clause_splitter.h"
#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {

TextPipeline::TextPipeline(const Checkpoint& checkpoint,
                           const DecodingOptions& decoding,
                           int max_sentence_tokens, const TextLimits& limits,
                           bool output_guard)
    : target_language_(checkpoint.target_language),
      source_vocabulary_(checkpoint.source_vocabulary),
      source_tokenizer_(checkpoint.source_language, checkpoint.source_subwords,
                        checkpoint.source_case),
      source_to_simplified_(SourceToSimplified(checkpoint)),
      source_lookup_(source_tokenizer_, source_vocabulary_,
                     source_to_simplified_ ? &*source_to_simplified_ : nullptr),
      splitter_(checkpoint.source_language),
      decoding_(decoding),
      max_sentence_tokens_(
          MaxSentenceTokens(checkpoint, decoding, max_sentence_tokens)),
      max_source_tokens_(checkpoint.model->config().MaxSourceTokens()),
      max_placeholders_(KnownPlaceholders(checkpoint)),
      source_prefix_(SourcePrefix(checkpoint)),
      target_prefix_(TargetPrefixIds(checkpoint)),
      limits_(limits),
      assembler_(checkpoint, decoding),
      guard_(checkpoint.source_vocabulary, checkpoint.target_vocabulary,
             {checkpoint.target_ratio_low, checkpoint.target_ratio_high},
             decoding, output_guard) {}

std::vector<PreparedText> TextPipeline::Prepare(
    const TextRequest& request) const {
  limits_.CheckTextCount(request.texts.size(), request.field);
  const TextOptions options = limits_.ReadOptions(request);
  CheckOptions(options);
  // First every text is checked and cut into sentences, which is cheap:
  // a request with more sentences than it may hold is refused before any
  // is masked or encoded (each sentence is one part at least).
  std::vector<std::string> fields;
  std::vector<SplitInput> inputs;
  std::size_t sentences = 0;
  for (std::size_t i = 0; i < request.texts.size(); ++i) {
    fields.push_back(request.indexed
                         ? request.field + "[" +
                               std::to_string(request.indices.empty()
                                                  ? i
                                                  : request.indices[i]) +
                               "]"
                         : request.field);
    inputs.push_back(
        SplitChecked(request.texts[i], fields.back(), options.format));
    for (const SplitText& run : inputs.back().runs) {
      sentences += run.sentences.size();
    }
  }
  limits_.CheckPartCount(sentences);
  std::vector<PreparedText> prepared;
  std::size_t parts = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    try {
      prepared.push_back(PrepareSplit(std::move(inputs[i]), options));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(fields[i] + ": " + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error(fields[i] +
                               ": preparing the text failed: " + e.what());
    }
    parts += prepared.back().parts.size();
  }
  limits_.CheckPartCount(parts);  // Long sentences add clauses.
  return prepared;
}

TextPipeline::SplitInput TextPipeline::SplitChecked(std::string_view text,
                                                    const std::string& field,
                                                    TextFormat format) const {
  // What a reader or the splitter refuses, named by the field.
  const auto named = [&field](const std::invalid_argument& e) {
    return std::invalid_argument(field + ": " + e.what());
  };
  if (format == TextFormat::kText) {
    limits_.CheckText(text, field);
    SplitInput input;
    try {
      input.runs.push_back(splitter_.Split(text));
    } catch (const std::invalid_argument& e) {
      throw named(e);
    }
    return input;
  }
  if (text.empty()) throw std::invalid_argument(field + " is empty");
  std::shared_ptr<const MarkedDocument> document;
  try {
    document = std::make_shared<const MarkedDocument>(
        ReadDocument(text, format, limits_.text_limits().max_document_depth));
  } catch (const std::invalid_argument& e) {
    throw named(e);
  }
  // A document's limit is on its words: markup costs no decoding (its size
  // is the surface's to bound, as an upload or a message).
  if (const std::string words = document->Words(); !words.empty()) {
    limits_.CheckText(words, field);
  }
  return SplitDocument(std::move(document));
}

TextPipeline::SplitInput TextPipeline::SplitDocument(
    std::shared_ptr<const MarkedDocument> document) const {
  SplitInput input;
  for (const std::string& run : document->texts()) {
    input.runs.push_back(splitter_.Split(run));
  }
  input.document = std::move(document);
  return input;
}

void TextPipeline::CheckRequestOptions(const TextRequest& request) const {
  CheckOptions(limits_.ReadOptions(request));
}

void TextPipeline::CheckOptions(const TextOptions& options) const {
  if (options.script && !writes_chinese()) {
    throw std::invalid_argument(
        "script applies to Chinese only; this model translates into \"" +
        target_language_ + "\"");
  }
  if (!options.glossary.empty() && max_placeholders_ == 0) {
    throw std::invalid_argument(
        "glossary: this model was trained without placeholders, so it "
        "cannot keep glossary terms");
  }
}

PreparedText TextPipeline::PrepareText(std::string_view text,
                                       const TextOptions& options) const {
  CheckOptions(options);
  if (options.format == TextFormat::kText) {
    SplitInput input;
    input.runs.push_back(splitter_.Split(text));
    return PrepareSplit(std::move(input), options);
  }
  return PrepareSplit(
      SplitDocument(std::make_shared<const MarkedDocument>(ReadDocument(
          text, options.format, limits_.text_limits().max_document_depth))),
      options);
}

PreparedText TextPipeline::PrepareSplit(SplitInput input,
                                        const TextOptions& options) const {
  PreparedText prepared;
  prepared.beam_size = options.beam_size;
  prepared.alternatives = std::min(options.alternatives, options.beam_size - 1);
  if (writes_chinese()) {
    prepared.script = options.script.value_or(ChineseScript::kSimplified);
  }
  const PlaceholderMasker masker(options.glossary, max_placeholders_,
                                 options.template_tokens);
  prepared.document = std::move(input.document);
  prepared.runs = std::move(input.runs);
  int sentence = 0;
  for (const SplitText& run : prepared.runs) {
    for (const std::string& each : run.sentences) {
      PrepareSentence(each, sentence++, masker, options.beam_size, &prepared);
    }
  }
  // A document with nothing to translate has no parts, and comes back as
  // it is; a plain text with none is refused.
  if (prepared.document == nullptr && prepared.parts.empty() &&
      prepared.verbatim_sentences.empty()) {
    throw std::invalid_argument("text has no tokens to translate");
  }
  return prepared;
}

void TextPipeline::PrepareSentence(const std::string& sentence,
                                   int sentence_index,
                                   const PlaceholderMasker& masker,
                                   int beam_size, PreparedText* text) const {
  MaskedSentence masked = masker.Mask(sentence, &source_lookup_);
  text->unknown_words.insert(text->unknown_words.end(),
                             masked.unknown_words.begin(),
                             masked.unknown_words.end());
  // The tokens of the unknown words the masker found: those it could not
  // mask (no placeholder left, or none in the model) are encoded as <unk>
  // below and are counted already.
  std::vector<std::string> counted;
  for (const std::string& word : masked.unknown_words) {
    for (std::string& token :
         source_tokenizer_.Tokenize(source_lookup_.Normalize(word))) {
      counted.push_back(std::move(token));
    }
  }
  // After masking: spans the user listed keep the script they match in.
  const std::vector<std::string> tokens =
      max_placeholders_ == 0
          ? TokenizeAroundPlaceholders(source_tokenizer_, source_lookup_,
                                       masked.text)
          : source_tokenizer_.Tokenize(source_lookup_.Normalize(masked.text));
  // "{name}", "%(count)d / %(total)d", "12:30": the model has no word to
  // translate, and would only add some.
  if (!tokens.empty() && !HasLetters(DecodeUtf8(masked.text))) {
    text->verbatim_sentences.emplace(
        sentence_index,
        RestorePlaceholders(masked.text, masked.restorations).text);
    return;
  }
  auto clauses = SplitIntoClauses(tokens, max_sentence_tokens_);
  if (max_placeholders_ == 0) clauses = JoinPlaceholderClauses(clauses);
  if (clauses.size() > 1) ++text->split_sentence_count;
  for (const std::vector<std::string>& clause : clauses) {
    std::vector<std::string> restorations;
    std::vector<std::string> part_tokens =
        RenumberPlaceholders(clause, masked.restorations, &restorations);
    // A model without placeholders reads none: they are put back where
    // its attention says.
    std::vector<PlaceholderAnchor> anchors;
    if (max_placeholders_ == 0) {
      part_tokens = TakeOutPlaceholders(part_tokens, &anchors);
    }
    // A multilingual model's source language token starts every part.
    if (!source_prefix_.empty()) {
      part_tokens.insert(part_tokens.begin(), source_prefix_.begin(),
                         source_prefix_.end());
      for (PlaceholderAnchor& anchor : anchors) {
        anchor.before += static_cast<int32_t>(source_prefix_.size());
      }
    }
    EncodedSource part{source_vocabulary_.Encode(part_tokens), beam_size,
                       text->alternatives};
    part.target_prefix = target_prefix_;
    part.align = max_placeholders_ == 0;
    for (std::size_t k = 0; k < part_tokens.size(); ++k) {
      if (part.ids[k] != Vocabulary::kUnkId) continue;
      const auto known =
          std::find(counted.begin(), counted.end(), part_tokens[k]);
      if (known != counted.end()) {
        counted.erase(known);
      } else {
        text->unknown_words.push_back(part_tokens[k]);
      }
    }
    text->source_token_count +=
        static_cast<int>(part.ids.size() - source_prefix_.size());
    text->parts.push_back(std::move(part));
    text->sentence_of_part.push_back(sentence_index);
    text->restorations.push_back(std::move(restorations));
    if (max_placeholders_ == 0) {
      text->source_pieces.push_back(std::move(part_tokens));
      text->anchors.push_back(std::move(anchors));
    }
  }
}

EncodedSource TextPipeline::EncodeSentence(std::string_view text) const {
  std::vector<std::string> tokens =
      source_tokenizer_.Tokenize(source_lookup_.Normalize(text));
  if (tokens.empty()) {
    throw std::invalid_argument("text has no tokens to translate");
  }
  tokens.insert(tokens.begin(), source_prefix_.begin(), source_prefix_.end());
  if (static_cast<int64_t>(tokens.size()) > max_source_tokens_) {
    throw std::invalid_argument("text has " + std::to_string(tokens.size()) +
                                " tokens; the model takes at most " +
                                std::to_string(max_source_tokens_));
  }
  EncodedSource source{source_vocabulary_.Encode(tokens)};
  source.target_prefix = target_prefix_;
  return source;
}

}  // namespace fanyi
