#include "common/eval/corpus_evaluation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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
  result.confidences.assign(sources.size(), 1.0);
  result.errors.resize(sources.size());

  // Every sentence (or clause) of every source is one part; parts of
  // similar length decode together.
  TextOptions options;
  options.beam_size = beam_size;
  std::vector<PreparedText> prepared(sources.size());
  std::vector<std::vector<DecodedPart>> targets(sources.size());
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
    std::vector<GuardVerdict> verdicts;
    auto batch_targets = translator.DecodeGuarded(batch, &verdicts);
    for (size_t k = begin; k < end; ++k) {
      targets[order[k].first][order[k].second] =
          std::move(batch_targets[k - begin]);
      const GuardVerdict& verdict = verdicts[k - begin];
      if (verdict.broken != BrokenOutput::kNone) {
        ++result.broken_parts[BrokenOutputName(verdict.broken)];
        result.repaired_parts += verdict.kept_retry ? 1 : 0;
      }
    }
    result.parts += static_cast<int64_t>(batch.size());
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
    result.confidences[i] = translation.confidence;
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

ConfidenceAgreement ScoreConfidence(
    const CorpusTranslation& translation,
    const std::vector<std::string>& references) {
  if (references.size() != translation.hypotheses.size()) {
    throw std::invalid_argument(
        "ScoreConfidence: " + std::to_string(references.size()) +
        " references for " + std::to_string(translation.hypotheses.size()) +
        " translations");
  }
  std::vector<double> confidences;
  std::vector<double> chrf;
  for (size_t i = 0; i < references.size(); ++i) {
    if (!translation.errors[i].empty()) continue;
    confidences.push_back(translation.confidences[i]);
    chrf.push_back(CorpusChrf({translation.hypotheses[i]}, {references[i]}));
  }
  ConfidenceAgreement agreement;
  agreement.count = static_cast<int64_t>(confidences.size());
  if (!confidences.empty()) {
    agreement.mean_confidence =
        std::accumulate(confidences.begin(), confidences.end(), 0.0) /
        static_cast<double>(confidences.size());
  }
  agreement.pearson = PearsonCorrelation(confidences, chrf);
  agreement.spearman = PearsonCorrelation(Ranks(confidences), Ranks(chrf));
  return agreement;
}

double PearsonCorrelation(const std::vector<double>& x,
                          const std::vector<double>& y) {
  if (x.size() != y.size()) {
    throw std::invalid_argument("PearsonCorrelation: series of " +
                                std::to_string(x.size()) + " and " +
                                std::to_string(y.size()) + " values");
  }
  const auto n = static_cast<double>(x.size());
  if (x.size() < 2) return 0;
  const double mean_x = std::accumulate(x.begin(), x.end(), 0.0) / n;
  const double mean_y = std::accumulate(y.begin(), y.end(), 0.0) / n;
  double xy = 0;
  double xx = 0;
  double yy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    xy += (x[i] - mean_x) * (y[i] - mean_y);
    xx += (x[i] - mean_x) * (x[i] - mean_x);
    yy += (y[i] - mean_y) * (y[i] - mean_y);
  }
  if (xx == 0 || yy == 0) return 0;
  return xy / std::sqrt(xx * yy);
}

std::vector<double> Ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t first = 0; first < order.size();) {
    size_t last = first + 1;
    while (last < order.size() && values[order[last]] == values[order[first]]) {
      ++last;
    }
    // Positions first..last-1 hold equal values: ranks first+1..last.
    const double mean_rank = (static_cast<double>(first + last) + 1) / 2;
    for (size_t k = first; k < last; ++k) ranks[order[k]] = mean_rank;
    first = last;
  }
  return ranks;
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
