#include "common/eval/bleu.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

constexpr int kMaxNgramOrder = 4;  // sacreBLEU MAX_NGRAM_ORDER
constexpr int kChrfCharOrder = 6;  // CHRF.CHAR_ORDER
constexpr double kChrfBeta = 2.0;  // CHRF.BETA

// Python's str.isspace(), which drives str.split()/strip() in sacreBLEU; it
// differs from IsSpace (e.g. U+001C-U+001F yes, U+200B no).
bool IsPythonSpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 ||
         c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// TokenizerZh._is_chinese_char. sacreBLEU writes two of its ranges as
// u'\u20000'-u'\u2a6d6' and u'\u2f800'-u'\u2fa1d', which Python reads as
// two-character strings, so they compare as U+2001..U+2A6D and
// U+2F81..U+2FA1 (general punctuation such as curly quotes and the ellipsis
// counts as Chinese; Extension B does not). Reproduced on purpose.
bool IsSacrebleuChineseChar(char32_t c) {
  struct Range {
    char32_t first;
    char32_t last;
  };
  static constexpr Range kRanges[] = {
      {0x3400, 0x4DB5}, {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D},
      {0xFA30, 0xFA6A}, {0xFA70, 0xFAD9}, {0x2001, 0x2A6D}, {0x2F81, 0x2FA1},
      {0xFF00, 0xFFEF}, {0x2E80, 0x2EFF}, {0x3000, 0x303F}, {0x31C0, 0x31EF},
      {0x2F00, 0x2FDF}, {0x2FF0, 0x2FFF}, {0x3100, 0x312F}, {0x31A0, 0x31BF},
      {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0x2600, 0x26FF}, {0x2700, 0x27BF},
      {0x3200, 0x32FF}, {0x3300, 0x33FF},
  };
  for (const Range& range : kRanges) {
    if (c >= range.first && c <= range.last) return true;
  }
  return false;
}

// The character class of TokenizerRegexp's first rule,
// [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation except ' , - .
bool IsMtevalSymbol(char32_t c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') ||
         (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

void ReplaceAll(std::string* text, std::string_view from, std::string_view to) {
  std::size_t position = 0;
  while ((position = text->find(from, position)) != std::string::npos) {
    text->replace(position, from.size(), to);
    position += to.size();
  }
}

std::u32string RightStrip(std::u32string text) {
  while (!text.empty() && IsPythonSpace(text.back())) text.pop_back();
  return text;
}

std::u32string Strip(std::u32string text) {
  text = RightStrip(std::move(text));
  std::size_t begin = 0;
  while (begin < text.size() && IsPythonSpace(text[begin])) ++begin;
  return text.substr(begin);
}

// TokenizerRegexp: four re.sub passes emulated with Python's left-to-right,
// non-overlapping matching, then str.split().
std::vector<std::string> RegexpTokenize(const std::u32string& line) {
  std::u32string pass1;
  for (char32_t c : line) {
    if (IsMtevalSymbol(c)) {
      pass1 += U' ';
      pass1 += c;
      pass1 += U' ';
    } else {
      pass1 += c;
    }
  }
  // ([^0-9])([\.,]) -> "\1 \2 "
  std::u32string pass2;
  for (std::size_t i = 0; i < pass1.size();) {
    if (i + 1 < pass1.size() && !IsAsciiDigit(pass1[i]) &&
        (pass1[i + 1] == '.' || pass1[i + 1] == ',')) {
      pass2 += pass1[i];
      pass2 += U' ';
      pass2 += pass1[i + 1];
      pass2 += U' ';
      i += 2;
    } else {
      pass2 += pass1[i++];
    }
  }
  // ([\.,])([^0-9]) -> " \1 \2"
  std::u32string pass3;
  for (std::size_t i = 0; i < pass2.size();) {
    if (i + 1 < pass2.size() && (pass2[i] == '.' || pass2[i] == ',') &&
        !IsAsciiDigit(pass2[i + 1])) {
      pass3 += U' ';
      pass3 += pass2[i];
      pass3 += U' ';
      pass3 += pass2[i + 1];
      i += 2;
    } else {
      pass3 += pass2[i++];
    }
  }
  // ([0-9])(-) -> "\1 \2 "
  std::u32string pass4;
  for (std::size_t i = 0; i < pass3.size();) {
    if (i + 1 < pass3.size() && IsAsciiDigit(pass3[i]) && pass3[i + 1] == '-') {
      pass4 += pass3[i];
      pass4 += U" - ";
      i += 2;
    } else {
      pass4 += pass3[i++];
    }
  }
  std::vector<std::string> tokens;
  std::u32string token;
  for (char32_t c : pass4) {
    if (IsPythonSpace(c)) {
      if (!token.empty()) tokens.push_back(EncodeUtf8(token));
      token.clear();
    } else {
      token += c;
    }
  }
  if (!token.empty()) tokens.push_back(EncodeUtf8(token));
  return tokens;
}

std::vector<std::string> Tokenize13a(std::string_view text) {
  // BLEU._preprocess_segment rstrips before tokenizing.
  std::string line = EncodeUtf8(RightStrip(DecodeUtf8(text)));
  ReplaceAll(&line, "<skipped>", "");
  ReplaceAll(&line, "-\n", "");
  ReplaceAll(&line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    ReplaceAll(&line, "&quot;", "\"");
    ReplaceAll(&line, "&amp;", "&");
    ReplaceAll(&line, "&lt;", "<");
    ReplaceAll(&line, "&gt;", ">");
  }
  return RegexpTokenize(U" " + DecodeUtf8(line) + U" ");
}

std::vector<std::string> TokenizeZh(std::string_view text) {
  const std::u32string line = Strip(DecodeUtf8(text));
  std::u32string spaced;
  for (char32_t c : line) {
    if (IsSacrebleuChineseChar(c)) {
      spaced += U' ';
      spaced += c;
      spaced += U' ';
    } else {
      spaced += c;
    }
  }
  return RegexpTokenize(spaced);
}

using NgramCounts = std::unordered_map<std::string, int64_t>;

// Word n-grams of orders 1..4, keyed by the tokens joined with spaces
// (tokens never contain whitespace, so keys of different orders differ).
std::array<NgramCounts, kMaxNgramOrder> WordNgrams(
    const std::vector<std::string>& tokens) {
  std::array<NgramCounts, kMaxNgramOrder> counts;
  for (std::size_t start = 0; start < tokens.size(); ++start) {
    std::string key;
    for (int n = 1; n <= kMaxNgramOrder && start + n <= tokens.size(); ++n) {
      if (n > 1) key += ' ';
      key += tokens[start + n - 1];
      ++counts[n - 1][key];
    }
  }
  return counts;
}

void CheckSizes(const std::vector<std::string>& hypotheses,
                const std::vector<std::string>& references) {
  if (hypotheses.size() != references.size()) {
    throw std::invalid_argument(
        "got " + std::to_string(hypotheses.size()) + " hypotheses but " +
        std::to_string(references.size()) +
        " references; pass exactly one reference per hypothesis");
  }
}

// sacreBLEU's my_log: log floored for zero precisions.
double FlooredLog(double value) {
  return value == 0.0 ? -9999999999.0 : std::log(value);
}

// Character n-gram counts after removing all whitespace.
std::array<std::unordered_map<std::u32string, int64_t>, kChrfCharOrder>
CharNgrams(std::string_view text) {
  std::u32string line;
  for (char32_t c : DecodeUtf8(text)) {
    if (!IsPythonSpace(c)) line += c;
  }
  std::array<std::unordered_map<std::u32string, int64_t>, kChrfCharOrder>
      counts;
  for (int n = 1; n <= kChrfCharOrder; ++n) {
    for (std::size_t i = 0; i + n <= line.size(); ++i) {
      ++counts[n - 1][line.substr(i, n)];
    }
  }
  return counts;
}

}  // namespace

BleuTokenizer BleuTokenizerForLanguage(const std::string& target_language) {
  const bool chinese = target_language == "zh" || target_language == "cmn" ||
                       target_language.rfind("zh-", 0) == 0 ||
                       target_language.rfind("zh_", 0) == 0;
  return chinese ? BleuTokenizer::kZh : BleuTokenizer::k13a;
}

std::vector<std::string> TokenizeForBleu(std::string_view text,
                                         BleuTokenizer tokenizer) {
  return tokenizer == BleuTokenizer::kZh ? TokenizeZh(text) : Tokenize13a(text);
}

BleuScore CorpusBleu(const std::vector<std::string>& hypotheses,
                     const std::vector<std::string>& references,
                     BleuTokenizer tokenizer) {
  CheckSizes(hypotheses, references);
  std::array<int64_t, kMaxNgramOrder> correct = {};
  std::array<int64_t, kMaxNgramOrder> total = {};
  BleuScore result;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    const std::vector<std::string> hypothesis =
        TokenizeForBleu(hypotheses[i], tokenizer);
    const std::vector<std::string> reference =
        TokenizeForBleu(references[i], tokenizer);
    result.hypothesis_length += static_cast<int64_t>(hypothesis.size());
    result.reference_length += static_cast<int64_t>(reference.size());
    const auto hypothesis_ngrams = WordNgrams(hypothesis);
    const auto reference_ngrams = WordNgrams(reference);
    for (int n = 0; n < kMaxNgramOrder; ++n) {
      for (const auto& [ngram, count] : hypothesis_ngrams[n]) {
        total[n] += count;
        const auto match = reference_ngrams[n].find(ngram);
        if (match != reference_ngrams[n].end()) {
          correct[n] += std::min(count, match->second);
        }
      }
    }
  }

  // BLEU.compute_bleu with smooth_method='exp', effective_order=False.
  const double hypothesis_length =
      static_cast<double>(result.hypothesis_length);
  const double reference_length = static_cast<double>(result.reference_length);
  result.brevity_penalty = 1.0;
  if (result.hypothesis_length < result.reference_length) {
    result.brevity_penalty =
        result.hypothesis_length > 0
            ? std::exp(1.0 - reference_length / hypothesis_length)
            : 0.0;
  }
  if (std::all_of(correct.begin(), correct.end(),
                  [](int64_t c) { return c == 0; })) {
    return result;  // score and precisions stay 0 (sacreBLEU issue #141)
  }
  double smooth_mteval = 1.0;
  for (int n = 0; n < kMaxNgramOrder; ++n) {
    if (total[n] == 0) break;
    if (correct[n] == 0) {
      smooth_mteval *= 2.0;
      result.precisions[n] =
          100.0 / (smooth_mteval * static_cast<double>(total[n]));
    } else {
      result.precisions[n] = 100.0 * static_cast<double>(correct[n]) /
                             static_cast<double>(total[n]);
    }
  }
  double log_sum = 0.0;
  for (double precision : result.precisions) log_sum += FlooredLog(precision);
  result.score = result.brevity_penalty * std::exp(log_sum / kMaxNgramOrder);
  return result;
}

double CorpusChrf(const std::vector<std::string>& hypotheses,
                  const std::vector<std::string>& references) {
  CheckSizes(hypotheses, references);
  // Per order: hypothesis n-grams, reference n-grams, matches.
  std::array<std::array<int64_t, 3>, kChrfCharOrder> statistics = {};
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    const auto hypothesis_ngrams = CharNgrams(hypotheses[i]);
    const auto reference_ngrams = CharNgrams(references[i]);
    for (int n = 0; n < kChrfCharOrder; ++n) {
      int64_t hypothesis_count = 0;
      int64_t match_count = 0;
      for (const auto& [ngram, count] : hypothesis_ngrams[n]) {
        hypothesis_count += count;
        const auto match = reference_ngrams[n].find(ngram);
        if (match != reference_ngrams[n].end()) {
          match_count += std::min(count, match->second);
        }
      }
      int64_t reference_count = 0;
      for (const auto& entry : reference_ngrams[n]) {
        reference_count += entry.second;
      }
      // sacreBLEU counts no hypothesis n-grams when the reference has none.
      statistics[n][0] += reference_ngrams[n].empty() ? 0 : hypothesis_count;
      statistics[n][1] += reference_count;
      statistics[n][2] += match_count;
    }
  }

  // CHRF._compute_f_score with eps_smoothing=False (effective order).
  const double factor = kChrfBeta * kChrfBeta;
  double average_precision = 0.0;
  double average_recall = 0.0;
  int effective_order = 0;
  for (const auto& [n_hypothesis, n_reference, n_match] : statistics) {
    if (n_hypothesis > 0 && n_reference > 0) {
      average_precision +=
          static_cast<double>(n_match) / static_cast<double>(n_hypothesis);
      average_recall +=
          static_cast<double>(n_match) / static_cast<double>(n_reference);
      ++effective_order;
    }
  }
  if (effective_order == 0) return 0.0;
  average_precision /= effective_order;
  average_recall /= effective_order;
  if (average_precision + average_recall == 0.0) return 0.0;
  const double score = (1.0 + factor) * average_precision * average_recall /
                       (factor * average_precision + average_recall);
  return 100.0 * score;
}

}  // namespace fanyi
