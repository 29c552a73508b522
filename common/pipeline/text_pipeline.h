#ifndef FANYI_COMMON_PIPELINE_TEXT_PIPELINE_H_
#define FANYI_COMMON_PIPELINE_TEXT_PIPELINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/decoding/decoding_options.h"
#include "common/pipeline/output_guard.h"
#include "common/pipeline/request_limits.h"
#include "common/pipeline/text_assembler.h"
#include "common/pipeline/text_translation.h"
#include "common/text/placeholder_masker.h"
#include "common/text/script_converter.h"
#include "common/text/sentence_splitter.h"
#include "common/text/tokenizer.h"
#include "common/text/vocabulary.h"
#include "common/text/vocabulary_lookup.h"

namespace fanyi {

struct Checkpoint;

// The one road of a text through translation, shared by every caller (the
// gRPC and HTTP surfaces, fanyi-eval, the trainer's validation, the
// benchmarks): Prepare checks a request against the limits and cuts each
// text into encoded parts (sentences, clauses of sentences too long for the
// model, spans masked by placeholders); the decoder decodes the parts; and
// its TextAssembler puts their translations back together. Knows the model's
// text side only (vocabularies, tokenizers, scripts, length caps), never its
// weights. Thread-safe: every method is const.
class TextPipeline {
 public:
  // The text side of `checkpoint`, with the length caps of `decoding`;
  // `max_sentence_tokens` and `output_guard` as TranslatorOptions says (0:
  // what the model does well). Throws std::invalid_argument for a negative
  // max_sentence_tokens.
  TextPipeline(const Checkpoint& checkpoint, const DecodingOptions& decoding,
               int max_sentence_tokens, const TextLimits& limits,
               bool output_guard);

  TextPipeline(const TextPipeline&) = delete;
  TextPipeline& operator=(const TextPipeline&) = delete;

  // Checks `request` against the limits and prepares its texts. Throws
  // std::invalid_argument naming the field and what is wrong with it ("texts
  // [2] has 30000 characters; the limit is 20000"), for the first problem
  // found: too few or many texts, a negative beam size, a script for a
  // target other than Chinese, too many, too long or blank glossary terms,
  // glossary terms for a model without placeholders, an empty, too long or
  // invalid UTF-8 text, one with nothing to translate, or more sentences and
  // clauses in all than a request may hold.
  // Returns one prepared text per text of the request, in order.
  std::vector<PreparedText> Prepare(const TextRequest& request) const;
  // Throws std::invalid_argument, as Prepare would, for what `request` asks
  // that this model or the limits do not allow, its texts aside: for a call
  // whose texts reach this model later (the second model of a pivot).
  void CheckRequestOptions(const TextRequest& request) const;

  // Prepares one text with options already checked (fanyi-eval and the
  // trainer translate a test set this way, with no request limits). Throws
  // std::invalid_argument for invalid UTF-8, a plain text with nothing to
  // translate (a document with nothing to translate has no parts, and
  // comes back as it is), a document its format's reader refuses, a bad
  // glossary, a glossary for a model trained without placeholders, or a
  // script for a target other than Chinese.
  PreparedText PrepareText(std::string_view text,
                           const TextOptions& options) const;

  // Tokenizes `text` as one sentence, as it is, and maps it to source ids
  // (for benchmarks of the decoder alone). Throws std::invalid_argument for
  // invalid UTF-8, text with no tokens or more than the model takes.
  EncodedSource EncodeSentence(std::string_view text) const;

  // Puts the decoded parts of a prepared text back together.
  const TextAssembler& assembler() const { return assembler_; }
  // Finds decoded parts that went wrong, to be decoded again.
  const OutputGuard& guard() const { return guard_; }

  // False when the target side was lowercased for training, so that
  // translations come out in lower case.
  bool keeps_target_case() const { return assembler_.keeps_target_case(); }
  // True for a Chinese target, whose script TextOptions::script picks.
  bool writes_chinese() const { return assembler_.writes_chinese(); }
  // True for a Chinese source trained in Simplified: text in any Chinese
  // script is converted to Simplified before it is translated.
  bool normalizes_source_script() const {
    return source_to_simplified_.has_value();
  }
  // Sentences longer than this many tokens are translated in clauses.
  int max_sentence_tokens() const { return max_sentence_tokens_; }
  // Spans per sentence that can pass through the model as placeholders
  // (0 for a model trained without them, whose parts align instead).
  int max_placeholders() const { return max_placeholders_; }
  // What one request may ask.
  const RequestLimits& limits() const { return limits_; }

 private:
  // Throws std::invalid_argument for options this model cannot follow: a
  // script for a target other than Chinese, or glossary terms without
  // placeholders. The one place these rules live.
  void CheckOptions(const TextOptions& options) const;
  // A text after the cheap first pass: read (a document) and cut into
  // its runs' sentences, nothing masked or encoded yet.
  struct SplitInput {
    std::shared_ptr<const MarkedDocument> document;  // For a document.
    std::vector<SplitText> runs;  // The text's, or its document's texts'.
  };
  // The first pass of one text of a request, named `field`: checked
  // against the limits (a plain text by its characters, a document by its
  // words), read and split. Throws std::invalid_argument naming the field.
  SplitInput SplitChecked(std::string_view text, const std::string& field,
                          TextFormat format) const;
  // Cuts a document's texts into their sentences.
  SplitInput SplitDocument(
      std::shared_ptr<const MarkedDocument> document) const;
  // Masks and encodes the sentences of `input` into parts. Throws
  // std::invalid_argument for a plain text with no tokens to translate.
  PreparedText PrepareSplit(SplitInput input, const TextOptions& options) const;
  // Prepares one sentence of a text into `text`.
  void PrepareSentence(const std::string& sentence, int sentence_index,
                       const PlaceholderMasker& masker, int beam_size,
                       PreparedText* text) const;
  const std::string target_language_;
  const Vocabulary source_vocabulary_;
  const Tokenizer source_tokenizer_;
  // For a Chinese source trained in Simplified: what brings input to it.
  const std::optional<ScriptConverter> source_to_simplified_;
  const VocabularyLookup source_lookup_;  // Reads the members above.
  const SentenceSplitter splitter_;
  const DecodingOptions decoding_;  // For the length cap of each part.
  const int max_sentence_tokens_;
  const int64_t max_source_tokens_;  // What the position table allows.
  const int max_placeholders_;
  // Checkpoint::source_prefix: the tokens every part starts with.
  const std::vector<std::string> source_prefix_;
  // Checkpoint::target_prefix as target ids: every part's.
  const std::vector<int64_t> target_prefix_;
  const RequestLimits limits_;
  const TextAssembler assembler_;
  const OutputGuard guard_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_TEXT_PIPELINE_H_
