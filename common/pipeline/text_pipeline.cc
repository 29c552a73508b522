#include "common/pipeline/text_pipeline.h"

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

#include "common/formats/marked_document.h"
#include "common/model/checkpoint.h"
#include "common/pipeline/documents.h"
#include "common/text/clause_splitter.h"
#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

// How many placeholders a sentence may hold: ｟1｠ ... ｟k｠ must all be
// tokens of both vocabularies, or the model never learned to carry them.
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

// `tokens` with its placeholders numbered from 1 in order of appearance;
// `restorations` gets what each becomes, from `sentence_restorations`.
std::vector<std::string> RenumberPlaceholders(
    std::vector<std::string> tokens,
    const std::vector<std::string>& sentence_restorations,
    std::vector<std::string>* restorations) {
  std::map<int, int> renumbered;
  for (std::string& token : tokens) {
    const int index = PlaceholderIndex(token);
    if (index < 1 || index > static_cast<int>(sentence_restorations.size())) {
      continue;
    }
    auto [it, added] =
        renumbered.emplace(index, static_cast<int>(renumbered.size()) + 1);
    if (added) restorations->push_back(sentence_restorations[index - 1]);
    token = PlaceholderToken(it->second);
  }
  return tokens;
}

// The tokens of `text` (normalized by `lookup`) for a model that never
// learned placeholders, which sees none (TakeOutPlaceholders): each stretch
// between them tokenized as a text of its own, trimmed, so that its pieces
// are those of the text without them; the placeholders as tokens between.
std::vector<std::string> TokenizeAroundPlaceholders(
    const Tokenizer& tokenizer, const VocabularyLookup& lookup,
    std::string_view text) {
  const std::u32string decoded = DecodeUtf8(text);
  std::vector<std::string> tokens;
  const auto add_stretch = [&](std::size_t begin, std::size_t end) {
    while (begin < end && IsSpace(decoded[begin])) ++begin;
    while (end > begin && IsSpace(decoded[end - 1])) --end;
    if (begin == end) return;
    for (std::string& token : tokenizer.Tokenize(lookup.Normalize(EncodeUtf8(
             std::u32string_view(decoded).substr(begin, end - begin))))) {
      tokens.push_back(std::move(token));
    }
  };
  std::size_t stretch = 0;
  for (std::size_t i = 0; i < decoded.size();) {
    const std::size_t end = PlaceholderEnd(decoded, i);
    if (end == i) {
      ++i;
      continue;
    }
    add_stretch(stretch, i);
    tokens.push_back(
        EncodeUtf8(std::u32string_view(decoded).substr(i, end - i)));
    stretch = i = end;
  }
  add_stretch(stretch, decoded.size());
  return tokens;
}

// `clauses` with each one of placeholders only joined to the clause before
// it (the first to the one after): for a model without placeholders,
// which reads none of them, such a clause would be an empty source.
std::vector<std::vector<std::string>> JoinPlaceholderClauses(
    std::vector<std::vector<std::string>> clauses) {
  const auto all_placeholders = [](const std::vector<std::string>& clause) {
    return std::all_of(clause.begin(), clause.end(), [](const std::string& t) {
      return PlaceholderIndex(t) > 0;
    });
  };
  std::vector<std::vector<std::string>> joined;
  std::vector<std::string> pending;  // Placeholders before the first words.
  for (std::vector<std::string>& clause : clauses) {
    if (!all_placeholders(clause)) {
      clause.insert(clause.begin(), pending.begin(), pending.end());
      pending.clear();
      joined.push_back(std::move(clause));
    } else if (joined.empty()) {
      pending.insert(pending.end(), clause.begin(), clause.end());
    } else {
      joined.back().insert(joined.back().end(), clause.begin(), clause.end());
    }
  }
  if (!pending.empty()) joined.push_back(std::move(pending));
  return joined;
}

// The ids of the checkpoint's target prefix. Throws std::invalid_argument
// for a token the target vocabulary lacks.
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

// The checkpoint's source prefix, checked: std::invalid_argument for a
// token the source vocabulary lacks.
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

}  // namespace

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
