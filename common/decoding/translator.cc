#include "common/decoding/translator.h"

#include <torch/utils.h>

#include <algorithm>
#include <map>
#include <optional>
#include <stdexcept>

#include "common/decoding/continuous_decoder.h"
#include "common/decoding/greedy_decoder.h"
#include "common/decoding/packed_transformer.h"
#include "common/model/checkpoint.h"
#include "common/model/device.h"
#include "common/text/clause_splitter.h"
#include "common/text/tokenizer.h"

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
  int64_t longest = checkpoint.model->config().max_positions - 1;
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

}  // namespace

struct Translator::Impl {
  Checkpoint checkpoint;
  Tokenizer source_tokenizer;
  Tokenizer target_tokenizer;
  DecodingOptions decoding;
  double length_penalty;
  torch::Device device;
  SentenceSplitter splitter;
  int max_sentence_tokens;
  int max_placeholders;
  // For a Chinese target, one converter per script; empty otherwise.
  std::map<ChineseScript, ScriptConverter> converters;
  // For a Chinese source trained in Simplified: what brings input to it.
  std::optional<ScriptConverter> source_to_simplified;

  // `text` in the script the source side was trained in.
  std::string NormalizeSource(std::string_view text) const {
    return source_to_simplified ? source_to_simplified->Convert(text)
                                : std::string(text);
  }

  // True when `word` (lowercased) has a token the source vocabulary lacks.
  bool IsUnknownWord(const std::string& word) const;
  // Prepares one sentence of a text into `text`.
  void PrepareSentence(const std::string& sentence, int sentence_index,
                       const PlaceholderMasker& masker, int beam_size,
                       PreparedText* text) const;
  // The translation of one part, from its target ids.
  std::string AssemblePart(const PreparedText& text, std::size_t part,
                           const std::vector<int64_t>& target_ids,
                           TextTranslation* translation) const;
};

bool Translator::Impl::IsUnknownWord(const std::string& word) const {
  for (const std::string& token :
       source_tokenizer.Tokenize(NormalizeSource(word))) {
    if (checkpoint.source_vocabulary.Id(token) == Vocabulary::kUnkId) {
      return true;
    }
  }
  return false;
}

void Translator::Impl::PrepareSentence(const std::string& sentence,
                                       int sentence_index,
                                       const PlaceholderMasker& masker,
                                       int beam_size,
                                       PreparedText* text) const {
  MaskedSentence masked = masker.Mask(
      sentence,
      [this](const std::string& word) { return IsUnknownWord(word); });
  text->unknown_words.insert(text->unknown_words.end(),
                             masked.unknown_words.begin(),
                             masked.unknown_words.end());
  // After masking: spans the user listed keep the script they match in.
  const std::vector<std::string> tokens =
      source_tokenizer.Tokenize(NormalizeSource(masked.text));
  const auto clauses = SplitIntoClauses(tokens, max_sentence_tokens);
  if (clauses.size() > 1) ++text->split_sentence_count;
  for (const std::vector<std::string>& clause : clauses) {
    std::vector<std::string> restorations;
    const std::vector<std::string> part_tokens =
        RenumberPlaceholders(clause, masked.restorations, &restorations);
    EncodedSource part{checkpoint.source_vocabulary.Encode(part_tokens),
                       beam_size};
    for (std::size_t k = 0; k < part_tokens.size(); ++k) {
      if (part.ids[k] == Vocabulary::kUnkId) {
        text->unknown_words.push_back(part_tokens[k]);
      }
    }
    text->source_token_count += static_cast<int>(part.ids.size());
    text->parts.push_back(std::move(part));
    text->sentence_of_part.push_back(sentence_index);
    text->restorations.push_back(std::move(restorations));
  }
}

std::string Translator::Impl::AssemblePart(
    const PreparedText& text, std::size_t part,
    const std::vector<int64_t>& target_ids,
    TextTranslation* translation) const {
  translation->generated_token_count += static_cast<int>(target_ids.size());
  if (static_cast<int64_t>(target_ids.size()) >=
      MaxTargetLength(decoding, text.parts[part].ids.size())) {
    ++translation->capped_part_count;
  }
  std::string detokenized = target_tokenizer.Detokenize(
      checkpoint.target_vocabulary.Decode(target_ids));
  // Converted before the spans return, so that they stay as written.
  if (text.script) {
    detokenized = converters.at(*text.script).Convert(detokenized);
  }
  RestoredText restored =
      RestorePlaceholders(detokenized, text.restorations[part]);
  translation->span_count += static_cast<int>(text.restorations[part].size());
  translation->unplaced_span_count += restored.unplaced;
  return restored.text;
}

std::unique_ptr<Translator> Translator::Load(const std::string& model_dir,
                                             const TranslatorOptions& options) {
  if (options.threads > 0) torch::set_num_threads(options.threads);
  Checkpoint checkpoint =
      LoadCheckpoint(model_dir, ResolveDevice(options.device));
  // A freshly loaded model is never trained, so its weights can be packed.
  SelectCpuDecoder(*checkpoint.model, options.cpu_decoder,
                   options.compute_type);
  return FromCheckpoint(checkpoint, options);
}

std::unique_ptr<Translator> Translator::FromCheckpoint(
    const Checkpoint& checkpoint, const TranslatorOptions& options) {
  if (options.length_penalty < 0) {
    throw std::invalid_argument("length_penalty must not be negative");
  }
  DecodingOptions decoding;
  decoding.length_ratio = options.length_ratio;
  decoding.length_offset = options.length_offset;
  decoding.beam_stops_early = options.beam_stops_early;
  // The position table bounds how far the decoder can go.
  decoding.max_length = std::min<int64_t>(
      options.max_decode_length, checkpoint.model->config().max_positions - 1);
  const torch::Device device = checkpoint.model->parameters().front().device();
  if (options.max_sentence_tokens < 0) {
    throw std::invalid_argument("max_sentence_tokens must not be negative");
  }
  const int64_t max_source = checkpoint.model->config().max_positions - 1;
  const int max_sentence_tokens =
      options.max_sentence_tokens > 0
          ? static_cast<int>(
                std::min<int64_t>(options.max_sentence_tokens, max_source))
          : DefaultMaxSentenceTokens(checkpoint, decoding);
  std::map<ChineseScript, ScriptConverter> converters;
  if (IsChineseLanguage(checkpoint.target_language)) {
    for (ChineseScript script :
         {ChineseScript::kSimplified, ChineseScript::kTraditionalTaiwan,
          ChineseScript::kTraditionalHongKong}) {
      converters.emplace(script, ScriptConverter(script));
    }
  }
  std::optional<ScriptConverter> source_to_simplified;
  if (IsChineseLanguage(checkpoint.source_language) &&
      checkpoint.source_script == "simplified") {
    source_to_simplified.emplace(ChineseScript::kSimplified);
  }
  auto impl = std::unique_ptr<Impl>(
      new Impl{checkpoint,
               Tokenizer(checkpoint.source_language, checkpoint.source_subwords,
                         checkpoint.source_case),
               Tokenizer(checkpoint.target_language, checkpoint.target_subwords,
                         checkpoint.target_case),
               decoding, options.length_penalty, device,
               SentenceSplitter(checkpoint.source_language),
               max_sentence_tokens, KnownPlaceholders(checkpoint),
               std::move(converters), std::move(source_to_simplified)});
  return std::unique_ptr<Translator>(new Translator(std::move(impl)));
}

Translator::Translator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Translator::~Translator() = default;

EncodedSource Translator::EncodeSource(std::string_view text) const {
  std::vector<std::string> tokens =
      impl_->source_tokenizer.Tokenize(impl_->NormalizeSource(text));
  if (tokens.empty()) {
    throw std::invalid_argument("text has no tokens to translate");
  }
  const int64_t max_source =
      impl_->checkpoint.model->config().max_positions - 1;
  if (static_cast<int64_t>(tokens.size()) > max_source) {
    throw std::invalid_argument("text has " + std::to_string(tokens.size()) +
                                " tokens; the model takes at most " +
                                std::to_string(max_source));
  }
  return {impl_->checkpoint.source_vocabulary.Encode(tokens)};
}

PreparedText Translator::Prepare(std::string_view text,
                                 const TextOptions& options) const {
  PreparedText prepared;
  if (options.script && impl_->converters.empty()) {
    throw std::invalid_argument(
        "script applies to Chinese only; this model translates into \"" +
        impl_->checkpoint.target_language + "\"");
  }
  if (!impl_->converters.empty()) {
    prepared.script = options.script.value_or(ChineseScript::kSimplified);
  }
  if (!options.glossary.empty() && impl_->max_placeholders == 0) {
    throw std::invalid_argument(
        "this model was trained without placeholders, so it cannot keep "
        "glossary terms; retrain it with this version of fanyi-train");
  }
  const PlaceholderMasker masker(options.glossary, impl_->max_placeholders);
  prepared.layout = impl_->splitter.Split(text);
  for (std::size_t i = 0; i < prepared.layout.sentences.size(); ++i) {
    impl_->PrepareSentence(prepared.layout.sentences[i], static_cast<int>(i),
                           masker, options.beam_size, &prepared);
  }
  if (prepared.parts.empty()) {
    throw std::invalid_argument("text has no tokens to translate");
  }
  return prepared;
}

TextTranslation Translator::Assemble(
    const PreparedText& text,
    const std::vector<std::vector<int64_t>>& part_targets) const {
  if (part_targets.size() != text.parts.size()) {
    throw std::invalid_argument(
        "Assemble: " + std::to_string(part_targets.size()) + " targets for " +
        std::to_string(text.parts.size()) + " parts");
  }
  TextTranslation translation;
  translation.sentence_count = static_cast<int>(text.layout.sentences.size());
  translation.split_sentence_count = text.split_sentence_count;
  translation.unknown_words = text.unknown_words;
  translation.source_token_count = text.source_token_count;
  // Chinese is written without spaces between clauses and sentences.
  const std::string separator =
      impl_->target_tokenizer.character_mode() ? "" : " ";
  std::vector<std::string> sentences(text.layout.sentences.size());
  for (std::size_t part = 0; part < text.parts.size(); ++part) {
    std::string& sentence = sentences[text.sentence_of_part[part]];
    const std::string clause =
        impl_->AssemblePart(text, part, part_targets[part], &translation);
    if (!sentence.empty() && !clause.empty()) sentence += separator;
    sentence += clause;
  }
  translation.text = JoinSentences(text.layout, sentences, separator);
  return translation;
}

std::vector<TextTranslation> Translator::TranslateTexts(
    const std::vector<std::string>& texts, const TextOptions& options) {
  std::vector<PreparedText> prepared;
  std::vector<EncodedSource> parts;
  for (const std::string& text : texts) {
    prepared.push_back(Prepare(text, options));
    parts.insert(parts.end(), prepared.back().parts.begin(),
                 prepared.back().parts.end());
  }
  const std::vector<std::vector<int64_t>> targets = TranslateIds(parts);
  std::vector<TextTranslation> translations;
  auto next = targets.begin();
  for (const PreparedText& text : prepared) {
    const auto end = next + static_cast<std::ptrdiff_t>(text.parts.size());
    translations.push_back(Assemble(text, {next, end}));
    next = end;
  }
  return translations;
}

std::vector<std::vector<int64_t>> Translator::TranslateIds(
    const std::vector<EncodedSource>& sources) {
  const int64_t max_source =
      impl_->checkpoint.model->config().max_positions - 1;
  for (const EncodedSource& source : sources) {
    if (static_cast<int64_t>(source.ids.size()) > max_source) {
      throw std::invalid_argument(
          "source has " + std::to_string(source.ids.size()) +
          " tokens; the model takes at most " + std::to_string(max_source));
    }
  }
  return NewContinuousDecoder()->DecodeAll(sources);
}

std::unique_ptr<ContinuousDecoder> Translator::NewContinuousDecoder() {
  return std::make_unique<ContinuousDecoder>(
      *impl_->checkpoint.model, impl_->decoding, impl_->length_penalty);
}

std::vector<std::string> Translator::Translate(
    const std::vector<std::string>& texts, int beam_size) {
  TextOptions options;
  options.beam_size = beam_size;
  std::vector<std::string> translations;
  for (TextTranslation& translation : TranslateTexts(texts, options)) {
    translations.push_back(std::move(translation.text));
  }
  return translations;
}

const std::string& Translator::model_version() const {
  return impl_->checkpoint.model_version;
}

std::string Translator::device_name() const { return impl_->device.str(); }

const std::string& Translator::source_language() const {
  return impl_->checkpoint.source_language;
}

const std::string& Translator::target_language() const {
  return impl_->checkpoint.target_language;
}

int64_t Translator::source_vocabulary_size() const {
  return impl_->checkpoint.source_vocabulary.size();
}

int64_t Translator::target_vocabulary_size() const {
  return impl_->checkpoint.target_vocabulary.size();
}

bool Translator::keeps_target_case() const {
  return !impl_->target_tokenizer.lowercases();
}

bool Translator::writes_chinese() const { return !impl_->converters.empty(); }

bool Translator::normalizes_source_script() const {
  return impl_->source_to_simplified.has_value();
}

int Translator::max_sentence_tokens() const {
  return impl_->max_sentence_tokens;
}

int Translator::max_placeholders() const { return impl_->max_placeholders; }

}  // namespace fanyi
