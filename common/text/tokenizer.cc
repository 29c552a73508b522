#include "common/text/tokenizer.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/text/placeholders.h"
#include "common/text/utf8.h"

namespace fanyi {
namespace {

bool IsDigit(char32_t c) {
  return (c >= '0' && c <= '9') || (c >= 0xFF10 && c <= 0xFF19);
}

// True when text[i] glues the letters/digits around it into one token:
// `-` (and optionally an apostrophe) between letters or digits, and `.`,
// `,`, `:` between digits (3.5, 1,000, 3:30).
bool IsJoiner(const std::u32string& text, std::size_t i,
              bool apostrophe_joins) {
  if (i == 0 || i + 1 >= text.size()) return false;
  const char32_t c = text[i];
  const char32_t before = text[i - 1];
  const char32_t after = text[i + 1];
  if (c == '-' || (apostrophe_joins && IsApostrophe(c))) {
    return IsLetterOrDigit(before) && IsLetterOrDigit(after);
  }
  if (c == '.' || c == ',' || c == ':') {
    return IsDigit(before) && IsDigit(after);
  }
  return false;
}

// English clitics split off after an apostrophe (`it 's`, `we 're`).
bool IsClitic(const std::u32string& suffix) {
  return suffix == U"s" || suffix == U"re" || suffix == U"ve" ||
         suffix == U"ll" || suffix == U"d" || suffix == U"m";
}

std::size_t LetterRunEnd(const std::u32string& text, std::size_t i) {
  while (i < text.size() && IsLetterOrDigit(text[i])) ++i;
  return i;
}

void PushToken(const std::u32string& text, std::size_t begin, std::size_t end,
               std::vector<std::string>* tokens) {
  tokens->push_back(
      EncodeUtf8(std::u32string_view(text).substr(begin, end - begin)));
}

// Pushes clitics such as `'s` or `'ve` that start at `i`; returns the
// position after the last one.
std::size_t PushClitics(const std::u32string& text, std::size_t i,
                        std::vector<std::string>* tokens) {
  while (i + 1 < text.size() && IsApostrophe(text[i]) &&
         IsLetterOrDigit(text[i + 1])) {
    const std::size_t end = LetterRunEnd(text, i + 1);
    if (!IsClitic(text.substr(i + 1, end - i - 1))) break;
    PushToken(text, i, end, tokens);
    i = end;
  }
  return i;
}

// Scans the English word starting at `start`, splitting contractions, and
// returns the position after it.
std::size_t ScanEnglishWord(const std::u32string& text, std::size_t start,
                            std::vector<std::string>* tokens) {
  std::size_t i = start;
  while (true) {
    i = LetterRunEnd(text, i);
    if (IsJoiner(text, i, /*apostrophe_joins=*/false)) {
      ++i;
      continue;
    }
    if (i + 1 < text.size() && IsApostrophe(text[i]) &&
        IsLetterOrDigit(text[i + 1])) {
      const std::size_t suffix_end = LetterRunEnd(text, i + 1);
      const std::u32string suffix = text.substr(i + 1, suffix_end - i - 1);
      if (IsClitic(suffix)) {
        PushToken(text, start, i, tokens);
        return PushClitics(text, i, tokens);
      }
      // "don't" -> "do" "n't": the n belongs to the negation.
      if (suffix == U"t" && i >= start + 2 && text[i - 1] == 'n') {
        PushToken(text, start, i - 1, tokens);
        PushToken(text, i - 1, suffix_end, tokens);
        return PushClitics(text, suffix_end, tokens);
      }
      ++i;  // o'clock, rock'n'roll: the apostrophe is part of the word.
      continue;
    }
    break;
  }
  PushToken(text, start, i, tokens);
  return i;
}

// Scans a letter/digit run in character mode (apostrophes stay inside).
std::size_t ScanLatinRun(const std::u32string& text, std::size_t start,
                         std::vector<std::string>* tokens) {
  std::size_t i = start;
  while (true) {
    i = LetterRunEnd(text, i);
    if (!IsJoiner(text, i, /*apostrophe_joins=*/true)) break;
    ++i;
  }
  PushToken(text, start, i, tokens);
  return i;
}

// Pushes the punctuation token at `i` (a run for `...` and `……`).
std::size_t ScanPunctuation(const std::u32string& text, std::size_t i,
                            std::vector<std::string>* tokens) {
  const char32_t c = text[i];
  std::size_t end = i + 1;
  if (c == '.' || c == 0x2026) {
    while (end < text.size() && text[end] == c) ++end;
  }
  PushToken(text, i, end, tokens);
  return end;
}

// Decodes a token for layout decisions; invalid UTF-8 (tokens do not come
// from Tokenize) is laid out like an unknown symbol instead of failing.
std::u32string DecodeToken(const std::string& token) {
  try {
    return DecodeUtf8(token);
  } catch (const std::invalid_argument&) {
    return U"\uFFFD";
  }
}

bool IsCliticToken(const std::u32string& decoded) {
  if (decoded == U"n't" || decoded == U"n\u2019t") return true;
  return decoded.size() >= 2 && IsApostrophe(decoded[0]) &&
         IsClitic(decoded.substr(1));
}

// Punctuation written directly after the previous word.
bool AttachesLeft(char32_t c) {
  switch (c) {
    case '.':
    case ',':
    case '!':
    case '?':
    case ';':
    case ':':
    case ')':
    case ']':
    case '}':
    case '%':
    case 0x2026:
    case 0x201D:
    case 0x3001:
    case 0x3002:
    case 0x300B:
    case 0x3011:
    case 0xFF01:
    case 0xFF09:
    case 0xFF0C:
    case 0xFF1A:
    case 0xFF1B:
    case 0xFF1F:
      return true;
    default:
      return false;
  }
}

// Punctuation written directly before the next word.
bool AttachesRight(char32_t c) {
  switch (c) {
    case '(':
    case '[':
    case '{':
    case '$':
    case 0x00A1:
    case 0x00BF:
    case 0x201C:
    case 0x2018:
    case 0x300A:
    case 0x3010:
    case 0xFF08:
      return true;
    default:
      return false;
  }
}

bool IsCharacterLanguage(const std::string& language) {
  return language == "zh" || language == "cmn" || language == "yue" ||
         language == "ja" || language == "ko";
}

}  // namespace

std::string WordCaseName(WordCase word_case) {
  return word_case == WordCase::kLower ? "lower" : "keep";
}

WordCase ParseWordCase(std::string_view name) {
  if (name == "lower") return WordCase::kLower;
  if (name == "keep") return WordCase::kKeep;
  throw std::invalid_argument("unknown letter case \"" + std::string(name) +
                              "\"; use lower or keep");
}

Tokenizer::Tokenizer(std::string language,
                     std::shared_ptr<const SubwordModel> subwords,
                     WordCase word_case)
    : language_(std::move(language)),
      character_mode_(IsCharacterLanguage(language_)),
      lowercases_(!character_mode_ && subwords == nullptr &&
                  word_case == WordCase::kLower),
      subwords_(std::move(subwords)) {}

std::vector<std::string> Tokenizer::TokenizeSubwords(
    const std::u32string& text) const {
  std::vector<std::string> tokens;
  std::u32string segment;       // Text since the last placeholder.
  bool continues_word = false;  // segment follows a placeholder directly.
  bool after_space = true;      // The start of the text counts as a space.
  auto flush = [&] {
    const std::vector<std::string> pieces =
        subwords_->Encode(EncodeUtf8(segment), continues_word);
    tokens.insert(tokens.end(), pieces.begin(), pieces.end());
    segment.clear();
  };
  std::size_t i = 0;
  while (i < text.size()) {
    const char32_t c = text[i];
    // A model with its own normalization map gets these as they are, so
    // that it cuts the text as SentencePiece does.
    if (IsControl(c)) {
      if (subwords_->normalizes()) segment.push_back(c);
      ++i;
    } else if (IsSpace(c)) {
      segment.push_back(subwords_->normalizes() ? c : U' ');
      after_space = true;
      ++i;
    } else if (const std::size_t end = PlaceholderEnd(text, i); end > i) {
      flush();
      if (after_space) tokens.emplace_back("\xE2\x96\x81");  // "▁"
      PushToken(text, i, end, &tokens);
      continues_word = true;
      after_space = false;
      i = end;
    } else {
      segment.push_back(c);
      after_space = false;
      ++i;
    }
  }
  flush();
  return tokens;
}

std::vector<std::string> Tokenizer::Tokenize(std::string_view text) const {
  std::u32string decoded = DecodeUtf8(text);
  if (subwords_) return TokenizeSubwords(decoded);
  if (lowercases_) {
    for (char32_t& c : decoded) c = ToLower(c);
  }
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < decoded.size()) {
    const char32_t c = decoded[i];
    if (IsSpace(c) || IsControl(c)) {
      ++i;
    } else if (const std::size_t end = PlaceholderEnd(decoded, i); end > i) {
      PushToken(decoded, i, end, &tokens);
      i = end;
    } else if (IsLetterOrDigit(c)) {
      // Word mode splits contractions; character mode keeps latin runs whole.
      i = character_mode_ ? ScanLatinRun(decoded, i, &tokens)
                          : ScanEnglishWord(decoded, i, &tokens);
    } else {
      i = ScanPunctuation(decoded, i, &tokens);  // CJK characters included
    }
  }
  return tokens;
}

std::string Tokenizer::Detokenize(
    const std::vector<std::string>& tokens) const {
  if (subwords_) return SubwordModel::Decode(tokens);
  return character_mode_ ? DetokenizeCharacters(tokens)
                         : DetokenizeWords(tokens);
}

std::string Tokenizer::DetokenizeCharacters(
    const std::vector<std::string>& tokens) const {
  std::string text;
  char32_t previous_last = 0;
  for (const std::string& token : tokens) {
    if (token.empty()) continue;
    const std::u32string decoded = DecodeToken(token);
    const char32_t first = decoded.front();
    const char32_t last = decoded.back();
    // Only two adjacent Latin words/numbers need a space ("Tom Jackson").
    if (IsLetterOrDigit(previous_last) && IsLetterOrDigit(first)) {
      text += ' ';
    }
    text += token;
    previous_last = last;
  }
  return text;
}

std::string Tokenizer::DetokenizeWords(
    const std::vector<std::string>& tokens) const {
  std::string text;
  char32_t previous_last = 0;
  bool previous_attaches_right = false;
  bool double_quote_open = false;
  bool single_quote_open = false;
  for (const std::string& token : tokens) {
    if (token.empty()) continue;
    const std::u32string decoded = DecodeToken(token);
    const char32_t first = decoded.front();
    const char32_t last = decoded.back();
    bool attaches_left = AttachesLeft(first) || IsCliticToken(decoded);
    bool attaches_right = AttachesRight(last);
    // Straight quotes alternate between opening and closing.
    if (token == "\"" || token == "'") {
      bool& open = token == "\"" ? double_quote_open : single_quote_open;
      attaches_left = open;
      attaches_right = !open;
      open = !open;
    }
    const bool both_cjk = IsCjk(previous_last) && IsCjk(first);
    if (!text.empty() && !attaches_left && !previous_attaches_right &&
        !both_cjk) {
      text += ' ';
    }
    text += token;
    previous_last = last;
    previous_attaches_right = attaches_right;
  }
  return text;
}

}  // namespace fanyi
