#ifndef FANYI_COMMON_PIPELINE_TEXT_ASSEMBLER_H_
#define FANYI_COMMON_PIPELINE_TEXT_ASSEMBLER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/decoding/decoding_options.h"
#include "common/pipeline/text_translation.h"
#include "common/text/script_converter.h"
#include "common/text/tokenizer.h"
#include "common/text/vocabulary.h"

namespace fanyi {

struct Checkpoint;

// The target side of a TextPipeline: puts the decoded parts of a prepared
// text back together. Knows the model's target vocabulary, tokenizer and
// scripts, never its weights. Thread-safe: every method is const.
class TextAssembler {
 public:
  // For `checkpoint`'s target side; a part that reaches the length cap of
  // `decoding` is counted as capped.
  TextAssembler(const Checkpoint& checkpoint, const DecodingOptions& decoding);

  // Puts the decoded parts of `text` (one per part, in order) back
  // together: detokenized, in the asked script, spans restored, sentences
  // joined in the text's layout, an HTML document's runs written back into
  // it; the confidence from their log-probabilities. Throws
  // std::invalid_argument when the counts differ.
  TextTranslation Assemble(const PreparedText& text,
                           const std::vector<DecodedPart>& parts) const;

  // The other translations of `text` (TextTranslation::alternatives): the
  // k-th puts together each part's k-th next-best hypothesis (its best
  // where it has none), and is kept when it differs from `best` and the
  // earlier ones. Empty when the text asked for none.
  std::vector<std::string> AssembleAlternatives(
      const PreparedText& text, const std::vector<DecodedPart>& parts,
      const std::string& best) const;

  // False when the target side was lowercased for training.
  bool keeps_target_case() const { return !target_tokenizer_.lowercases(); }
  // True for a Chinese target, written in the script a text asks for.
  bool writes_chinese() const { return !converters_.empty(); }

 private:
  // The translation of one part, from its decoded ids (and, for a part
  // that aligns, their source positions).
  std::string AssemblePart(const PreparedText& text, std::size_t part,
                           const DecodedPart& decoded,
                           TextTranslation* translation) const;

  const Vocabulary target_vocabulary_;
  const Tokenizer target_tokenizer_;
  // For a Chinese target, one converter per script; empty otherwise.
  const std::map<ChineseScript, ScriptConverter> converters_;
  const DecodingOptions decoding_;  // For the length cap of each part.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_PIPELINE_TEXT_ASSEMBLER_H_
