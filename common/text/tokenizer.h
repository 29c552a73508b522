// Rule-based word/character tokenizer for the translation model's source and
// target text.
#ifndef FANYI_COMMON_TEXT_TOKENIZER_H_
#define FANYI_COMMON_TEXT_TOKENIZER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/text/subword_model.h"

namespace fanyi {

// Splits text into model tokens and joins tokens back into natural text.
//
// Character mode ("zh", "cmn", "yue", "ja", "ko"): no lowercasing; every CJK
// character is a token; runs of letters and digits stay whole, including
// `.`, `,`, `:` between digits (`3.5`, `3:30`), `-` and apostrophes between
// letters or digits (`Tom's`, `e-mail`); every other character is its own
// token except that runs of `.` and of `…` stay together.
//
// Word mode (every other language): text is lowercased (unless the
// tokenizer keeps case: WordCase::kKeep) and split in the style of the Penn
// Treebank tokenizer: words are runs of letters and digits
// (keeping `-` between them and `.`, `,`, `:` between digits), English
// contractions are split (`don't` -> `do n't`, `it's` -> `it 's`), other
// internal apostrophes are kept (`o'clock`), runs of `.` (`...`) stay
// together, and every other character (punctuation, quotes, CJK characters)
// is its own token.
//
// In both modes whitespace separates tokens and is dropped, control
// characters (NUL, DEL, C1) are dropped, and a placeholder (`｟1｠`, see
// text/placeholders.h) is one token.
//
// Subword mode (a SubwordModel given, any language): no lowercasing; control
// characters are dropped and every whitespace character becomes a space,
// unless the model normalizes text itself (SubwordModel::normalizes);
// the text between placeholders is cut into the model's pieces; a
// placeholder is one token, preceded by a "▁" token when a space or the
// start of the text precedes it, so that the pieces decode back to the
// spacing they came from.
// Whether word mode lowercases: a source side may (it folds "The" and "the"
// into one token), a target side read by people keeps its case.
enum class WordCase { kLower, kKeep };

// "lower" or "keep" (checkpoints and prepared corpora store these).
std::string WordCaseName(WordCase word_case);
// The inverse; throws std::invalid_argument for another name.
WordCase ParseWordCase(std::string_view name);

class Tokenizer {
 public:
  // Creates a tokenizer for an ISO 639 language code such as "en" or "zh";
  // with `subwords`, in subword mode. `word_case` matters in word mode only.
  explicit Tokenizer(std::string language,
                     std::shared_ptr<const SubwordModel> subwords = nullptr,
                     WordCase word_case = WordCase::kLower);

  // Splits `text`; throws std::invalid_argument on invalid UTF-8.
  std::vector<std::string> Tokenize(std::string_view text) const;

  // Joins tokens into natural text (inverse of Tokenize up to whitespace and,
  // in word mode, letter case).
  std::string Detokenize(const std::vector<std::string>& tokens) const;

  // The language code this tokenizer was created for.
  const std::string& language() const { return language_; }

  // True when Tokenize lowercases (word mode with WordCase::kLower).
  bool lowercases() const { return lowercases_; }

  // True for languages written without spaces between words (Chinese etc.):
  // tokenized per character unless a subword model is given.
  bool character_mode() const { return character_mode_; }

  // The subword model, or null.
  const std::shared_ptr<const SubwordModel>& subwords() const {
    return subwords_;
  }

 private:
  std::vector<std::string> TokenizeSubwords(const std::u32string& text) const;
  std::string DetokenizeWords(const std::vector<std::string>& tokens) const;
  std::string DetokenizeCharacters(
      const std::vector<std::string>& tokens) const;

  std::string language_;
  bool character_mode_;
  bool lowercases_;
  std::shared_ptr<const SubwordModel> subwords_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_TOKENIZER_H_
