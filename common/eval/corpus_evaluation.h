#ifndef FANYI_COMMON_EVAL_CORPUS_EVALUATION_H_
#define FANYI_COMMON_EVAL_CORPUS_EVALUATION_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/eval/bleu.h"
#include "common/pipeline/translator.h"

namespace fanyi {

// Translations of a whole corpus, with what they cost.
struct CorpusTranslation {
  std::vector<std::string> hypotheses;  // One per source, in input order.
  // Per source: TextTranslation::confidence (1 for a source not
  // translated).
  std::vector<double> confidences;
  std::vector<std::string> errors;  // Per source: why it was not
                                    // translated ("" when it was).
  int64_t failed = 0;               // Sources with an error.
  int64_t generated_tokens = 0;     // Target tokens, </s> excluded.
  int64_t spans = 0;                // Spans carried by placeholders.
  int64_t unplaced_spans = 0;       // Of those, left out by the model.
  int64_t unknown_words = 0;        // Source words the vocabulary lacks.
  int64_t parts = 0;                // Sentences and clauses decoded.
  // Parts OutputGuard found broken, by kind (BrokenOutputName), whether or
  // not it was on; and those whose second decoding was kept.
  std::map<std::string, int64_t> broken_parts;
  int64_t repaired_parts = 0;
  double seconds = 0;  // Wall time of encoding + decoding.
};

// Translates `sources` as the server does (TextPipeline::PrepareText and
// Assemble: sentences, clauses, placeholders, Simplified script), decoding
// their parts in batches of `batch_size` parts of similar length (sorting by
// length keeps padding and wasted steps low). A source that cannot be
// prepared (invalid UTF-8, nothing to translate) gets an empty hypothesis
// and its error; the others are unaffected.
CorpusTranslation TranslateCorpus(const Translator& translator,
                                  const std::vector<std::string>& sources,
                                  int batch_size, int beam_size);

// Corpus BLEU and chrF2 by sacreBLEU's definitions.
struct CorpusScore {
  BleuScore bleu;
  double chrf = 0;
  BleuTokenizer tokenizer = BleuTokenizer::k13a;
};

// Scores `hypotheses` against one reference each; the BLEU tokenization
// follows the target language (`zh` for Chinese, `13a` otherwise).
CorpusScore ScoreCorpus(const std::vector<std::string>& hypotheses,
                        const std::vector<std::string>& references,
                        const std::string& target_language);

// How well translations' confidences rank them by quality: the correlation
// of each translation's confidence with its sentence chrF2 against its
// reference, over the sources translated without error.
struct ConfidenceAgreement {
  int64_t count = 0;           // Translations compared.
  double mean_confidence = 0;  // Their mean confidence.
  double pearson = 0;          // Pearson's r (0 when either is constant).
  double spearman = 0;         // Spearman's ρ: Pearson's r of the ranks,
                               // ties given their mean rank.
};
ConfidenceAgreement ScoreConfidence(const CorpusTranslation& translation,
                                    const std::vector<std::string>& references);

// Pearson's correlation of two series of the same length; 0 when either is
// constant or they are shorter than 2.
double PearsonCorrelation(const std::vector<double>& x,
                          const std::vector<double>& y);

// Each value's rank in `values` from 1, ties given their mean rank.
std::vector<double> Ranks(const std::vector<double>& values);

// `score` with two decimals, as the reports print it ("25.10").
std::string FormatScore(double score);

// "BLEU = 25.10 58.2/31.0/18.4/11.2 (BP = 1.000 ratio = 1.013 hyp_len = ...
// ref_len = ...)\nchrF2 = 23.40\n" plus a line naming the tokenization.
std::string DescribeScore(const CorpusScore& score);

}  // namespace fanyi

#endif  // FANYI_COMMON_EVAL_CORPUS_EVALUATION_H_
