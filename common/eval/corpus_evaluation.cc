#include "common/eval/corpus_evaluation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace fanyi {

CorpusTranslation TranslateCorpus(const Translator& translator,
                                  const std::vector<std::string>& sources,
                                  int batch_size, int beam_size) {
  if (batch_size < 1) throw std::invalid_argument("batch_size must be >= 1");
  const auto start = std::chrono::steady_clock::now();
  CorpusTranslation result;
  result.hypotheses.resize(sources.size());
  result.errors.resize(sources.size());

  // Every sentence (or clause) of every source is one part; parts of
  // similar length decode together.
  TextOptions options;
  options.beam_size = beam_size;
  std::vector<PreparedText> prepared(sources.size());
  std::vector<std::vector<std::vector<int64_t>>> targets(sources.size());
  std::vector<std::pair<size_t, size_t>> order;  // (source, part)
  for (size_t i = 0; i < sources.size(); ++i) {
    try {
      prepared[i] = translator.pipeline().PrepareText(sources[i], options);
    } catch (const std::invalid_argument& error) {
      result.errors[i] = error.what();
      ++result.failed;
      continue;
    }
    targets[i].resize(prepared[i].parts.size());
    for (size_t part = 0; part < prepared[i].parts.size(); ++part) {
      order.emplace_back(i, part);
    }
  }
  const auto length = [&](const std::pair<size_t, size_t>& at) {
    return prepared[at.first].parts[at.second].ids.size();
  };
  std::stable_sort(
      order.begin(), order.end(),
      [&](const auto& a, const auto& b) { return length(a) < length(b); });
  for (size_t begin = 0; begin < order.size(); begin += batch_size) {
    const size_t end = std::min(order.size(), begin + batch_size);
    std::vector<EncodedSource> batch;
    for (size_t k = begin; k < end; ++k) {
      batch.push_back(prepared[order[k].first].parts[order[k].second]);
    }
    auto batch_targets = translator.TranslateIds(batch);
    for (size_t k = begin; k < end; ++k) {
      targets[order[k].first][order[k].second] =
          std::move(batch_targets[k - begin]);
    }
  }
  for (size_t i = 0; i < sources.size(); ++i) {
    if (!result.errors[i].empty()) continue;
    const TextTranslation translation =
        translator.pipeline().assembler().Assemble(prepared[i], targets[i]);
    result.generated_tokens += translation.generated_token_count;
    result.spans += translation.span_count;
    result.unplaced_spans += translation.unplaced_span_count;
    result.unknown_words +=
        static_cast<int64_t>(translation.unknown_words.size());
    result.hypotheses[i] = translation.text;
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

std::string FormatScore(double score) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", score);
  return text;
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
