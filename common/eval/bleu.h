// Corpus BLEU and chrF computed exactly like sacreBLEU 2.x (default
// settings), so scores are comparable with published numbers.
#ifndef FANYI_COMMON_EVAL_BLEU_H_
#define FANYI_COMMON_EVAL_BLEU_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fanyi {

// sacreBLEU's tokenizers: "13a" (mteval-v13a, the default) and "zh".
enum class BleuTokenizer { k13a, kZh };

// The tokenizer sacreBLEU picks for a target language: kZh for "zh" (also
// "zh-*", "zh_*" and "cmn"), k13a otherwise (sacreBLEU's Japanese and Korean
// tokenizers need MeCab and are not implemented).
BleuTokenizer BleuTokenizerForLanguage(const std::string& target_language);

// Tokenizes one segment as sacreBLEU does before counting n-grams. Throws
// std::invalid_argument on invalid UTF-8.
std::vector<std::string> TokenizeForBleu(std::string_view text,
                                         BleuTokenizer tokenizer);

// A corpus BLEU result; score and precisions are percentages (0-100).
struct BleuScore {
  double score = 0.0;                     // BLEU
  std::array<double, 4> precisions = {};  // smoothed n-gram precisions
  double brevity_penalty = 0.0;           // exp(1 - ref/hyp) when shorter
  int64_t hypothesis_length = 0;          // tokens in all hypotheses
  int64_t reference_length = 0;           // tokens in all references
};

// sacreBLEU's corpus_bleu(hypotheses, [references], tokenize=...) with its
// defaults ('exp' smoothing, case-sensitive, order 4). One reference per
// hypothesis; throws std::invalid_argument when the sizes differ or a
// segment is not valid UTF-8.
BleuScore CorpusBleu(const std::vector<std::string>& hypotheses,
                     const std::vector<std::string>& references,
                     BleuTokenizer tokenizer);

// sacreBLEU's corpus_chrf(hypotheses, [references]) with its defaults
// (chrF2: character order 6, no word n-grams, beta 2, whitespace removed),
// as a percentage. Throws like CorpusBleu.
double CorpusChrf(const std::vector<std::string>& hypotheses,
                  const std::vector<std::string>& references);

}  // namespace fanyi

#endif  // FANYI_COMMON_EVAL_BLEU_H_
