// libFuzzer target: Tokenizer::Tokenize and Detokenize on arbitrary bytes.
//
// Input: the first byte picks the tokenizer (even: English word mode, odd:
// Chinese character mode), the rest is the text. Properties:
//   - Tokenize throws std::invalid_argument exactly when the text is not
//     strict UTF-8 (DecodeUtf8 decides), and nothing else ever escapes;
//   - tokens are non-empty valid UTF-8 with no whitespace or control
//     characters;
//   - Detokenize(Tokenize(x)) keeps every character of x except whitespace and
//     control characters (which Tokenize drops by design), in order; word mode
//     lowercases, so there it is compared with ToLower(x). Unknown symbols are
//     no exception: the tokenizer has no vocabulary, so nothing becomes <unk>;
//   - Detokenize of arbitrary byte strings (the invalid UTF-8 a corrupt
//     vocabulary could hold) does not fail and only adds single spaces.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/text/tokenizer.h"
#include "common/text/utf8.h"
#include "tests/fuzz/fuzz_check.h"

namespace fanyi::fuzzing {
namespace {

// The characters of `text` that tokenization keeps, lowercased when
// `lowercase` (word mode).
std::u32string VisibleCharacters(const std::u32string& text, bool lowercase) {
  std::u32string visible;
  for (char32_t c : text) {
    if (IsSpace(c) || IsControl(c)) continue;
    visible.push_back(lowercase ? ToLower(c) : c);
  }
  return visible;
}

void CheckRoundTrip(const Tokenizer& tokenizer, std::string_view text) {
  bool valid_utf8 = true;
  std::u32string code_points;
  try {
    code_points = DecodeUtf8(text);
  } catch (const std::invalid_argument&) {
    valid_utf8 = false;
  }
  std::vector<std::string> tokens;
  try {
    tokens = tokenizer.Tokenize(text);
  } catch (const std::invalid_argument&) {
    FuzzCheck(!valid_utf8, "Tokenize rejected valid UTF-8");
    return;
  }
  FuzzCheck(valid_utf8, "Tokenize accepted invalid UTF-8");

  for (const std::string& token : tokens) {
    FuzzCheck(!token.empty(), "empty token");
    const std::u32string decoded = DecodeUtf8(token);  // Throws if invalid.
    for (char32_t c : decoded) {
      FuzzCheck(!IsSpace(c) && !IsControl(c),
                "token \"" + token + "\" holds whitespace or a control");
    }
  }
  const bool word_mode = !tokenizer.character_mode();
  const std::string joined = tokenizer.Detokenize(tokens);
  FuzzCheck(
      VisibleCharacters(DecodeUtf8(joined), false) ==
          VisibleCharacters(code_points, word_mode),
      "Detokenize(Tokenize(x)) lost or changed characters: \"" + joined + "\"");
}

// Detokenize on byte strings split at '\n', valid UTF-8 or not.
void CheckDetokenizeRawPieces(const Tokenizer& tokenizer,
                              std::string_view bytes) {
  std::vector<std::string> pieces;
  std::size_t start = 0;
  while (start <= bytes.size()) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    pieces.emplace_back(bytes.substr(start, end - start));
    start = end + 1;
  }
  std::size_t piece_bytes = 0;
  std::size_t non_empty = 0;
  for (const std::string& piece : pieces) {
    piece_bytes += piece.size();
    if (!piece.empty()) ++non_empty;
  }
  const std::string joined = tokenizer.Detokenize(pieces);
  // Pieces are copied whole, with at most one space between neighbours.
  const std::size_t max_spaces = non_empty == 0 ? 0 : non_empty - 1;
  FuzzCheck(
      joined.size() >= piece_bytes && joined.size() <= piece_bytes + max_spaces,
      "Detokenize changed the pieces' bytes");
}

}  // namespace
}  // namespace fanyi::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fanyi::Tokenizer* const english = new fanyi::Tokenizer("en");
  static const fanyi::Tokenizer* const chinese = new fanyi::Tokenizer("zh");
  if (size == 0) return 0;
  const fanyi::Tokenizer& tokenizer = (data[0] & 1) ? *chinese : *english;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1,
                              size - 1);
  fanyi::fuzzing::CheckRoundTrip(tokenizer, text);
  fanyi::fuzzing::CheckDetokenizeRawPieces(tokenizer, text);
  return 0;
}
