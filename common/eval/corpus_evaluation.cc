#include "common/eval/corpus_evaluation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace fanyi {

CorpusTranslation TranslateCorpus(Translator& translator,
                                  const std::vector<std::string>& sources,
                                  int batch_size, int beam_size) {
  if (batch_size < 1) throw std::invalid_argument("batch_size must be >= 1");
  const auto start = std::chrono::steady_clock::now();
  CorpusTranslation result;
  result.hypotheses.resize(sources.size());
  result.errors.resize(sources.size());

  std::vector<EncodedSource> encoded(sources.size());
  std::vector<size_t> order;
  for (size_t i = 0; i < sources.size(); ++i) {
    try {
      encoded[i] = translator.EncodeSource(sources[i]);
      encoded[i].beam_size = beam_size;
      order.push_back(i);
    } catch (const std::invalid_argument& error) {
      result.errors[i] = error.what();
      ++result.failed;
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return encoded[a].ids.size() < encoded[b].ids.size();
  });
  for (size_t begin = 0; begin < order.size(); begin += batch_size) {
    const size_t end = std::min(order.size(), begin + batch_size);
    std::vector<EncodedSource> batch;
    for (size_t k = begin; k < end; ++k) batch.push_back(encoded[order[k]]);
    const auto targets = translator.TranslateIds(batch);
    for (size_t k = begin; k < end; ++k) {
      const auto& ids = targets[k - begin];
      result.generated_tokens += static_cast<int64_t>(ids.size());
      result.hypotheses[order[k]] = translator.DecodeTarget(ids);
    }
  }
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return result;
}

CorpusScore ScoreCorpus(const std::vector<std::string>& hypotheses,
                        const std::vector<std::string>& references,
                        const std::string& target_language) {
  CorpusScore score;
  score.tokenizer = BleuTokenizerForLanguage(target_language);
  score.bleu = CorpusBleu(hypotheses, references, score.tokenizer);
  score.chrf = CorpusChrf(hypotheses, references);
  return score;
}

std::string DescribeScore(const CorpusScore& score) {
  const BleuScore& bleu = score.bleu;
  const double ratio =
      bleu.reference_length > 0
          ? static_cast<double>(bleu.hypothesis_length) / bleu.reference_length
          : 0.0;
  char text[512];
  std::snprintf(
      text, sizeof(text),
      "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld "
      "ref_len = %lld)\nchrF2 = %.2f\nsignature: nrefs:1|case:mixed|"
      "tokenize:%s|smooth:exp (sacreBLEU's definitions)\n",
      bleu.score, bleu.precisions[0], bleu.precisions[1], bleu.precisions[2],
      bleu.precisions[3], bleu.brevity_penalty, ratio,
      static_cast<long long>(bleu.hypothesis_length),
      static_cast<long long>(bleu.reference_length), score.chrf,
      score.tokenizer == BleuTokenizer::kZh ? "zh" : "13a");
  return text;
}

}  // namespace fanyi
