#include "common/text/charsmap_normalizer.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// SentencePiece keeps the first 32 rules a position matches, shortest first.
constexpr size_t kMaxMatches = 32;

[[noreturn]] void Fail(const std::string& what) {
  throw std::invalid_argument("SentencePiece normalization map: " + what);
}

// A Darts double-array unit.
bool HasLeaf(uint32_t unit) { return ((unit >> 8) & 1) == 1; }
uint32_t Value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t Label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t Offset(uint32_t unit) {
  return (unit >> 10) << ((unit & (1u << 9)) >> 6);
}

bool IsTrailByte(unsigned char byte) { return (byte & 0xC0) == 0x80; }

bool IsValidCodePoint(uint32_t c) {
  return c < 0xD800 || (c >= 0xE000 && c <= 0x10FFFF);
}

// The length of the valid UTF-8 character `text` starts with (shortest form,
// no surrogate), or 0; as SentencePiece's DecodeUTF8.
size_t ValidCharacterLength(std::string_view text) {
  const auto byte = [&](size_t i) {
    return static_cast<unsigned char>(text[i]);
  };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  if (text.size() >= 2 && (lead & 0xE0) == 0xC0 && IsTrailByte(byte(1))) {
    const uint32_t c = ((lead & 0x1Fu) << 6) | (byte(1) & 0x3Fu);
    if (c >= 0x80) return 2;
  } else if (text.size() >= 3 && (lead & 0xF0) == 0xE0 &&
             IsTrailByte(byte(1)) && IsTrailByte(byte(2))) {
    const uint32_t c =
        ((lead & 0x0Fu) << 12) | ((byte(1) & 0x3Fu) << 6) | (byte(2) & 0x3Fu);
    if (c >= 0x800 && IsValidCodePoint(c)) return 3;
  } else if (text.size() >= 4 && (lead & 0xF8) == 0xF0 &&
             IsTrailByte(byte(1)) && IsTrailByte(byte(2)) &&
             IsTrailByte(byte(3))) {
    const uint32_t c = ((lead & 0x07u) << 18) | ((byte(1) & 0x3Fu) << 12) |
                       ((byte(2) & 0x3Fu) << 6) | (byte(3) & 0x3Fu);
    if (c >= 0x10000 && IsValidCodePoint(c)) return 4;
  }
  return 0;
}

}  // namespace

CharsMapNormalizer::CharsMapNormalizer(std::string_view charsmap) {
  if (charsmap.size() < 4) Fail("shorter than its 4-byte header");
  uint32_t trie_bytes = 0;
  for (int i = 3; i >= 0; --i) {
    trie_bytes = (trie_bytes << 8) | static_cast<unsigned char>(charsmap[i]);
  }
  charsmap.remove_prefix(4);
  if (trie_bytes > charsmap.size() || trie_bytes % 4 != 0 || trie_bytes == 0) {
    Fail("a trie of " + std::to_string(trie_bytes) + " bytes in " +
         std::to_string(charsmap.size()));
  }
  trie_.resize(trie_bytes / 4);
  for (size_t i = 0; i < trie_.size(); ++i) {
    const auto* bytes =
        reinterpret_cast<const unsigned char*>(charsmap.data() + 4 * i);
    trie_[i] = uint32_t{bytes[0]} | uint32_t{bytes[1]} << 8 |
               uint32_t{bytes[2]} << 16 | uint32_t{bytes[3]} << 24;
  }
  outputs_ = std::string(charsmap.substr(trie_bytes));
  if (outputs_.empty() || outputs_.back() != '\0') {
    Fail("its outputs do not end in a NUL");
  }
  // Every offset into the outputs then reads a bounded string without two
  // spaces in a row (Normalize collapses runs across outputs only).
  size_t run = 0;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    run = outputs_[i] == '\0' ? 0 : run + 1;
    if (run > kMaxOutputBytes) {
      Fail("an output longer than " + std::to_string(kMaxOutputBytes) +
           " bytes");
    }
    if (outputs_[i] == ' ' && i > 0 && outputs_[i - 1] == ' ') {
      Fail("an output with two spaces in a row");
    }
  }
  // Every rule's output inside the outputs: the unit a search reaches a
  // rule's end at holds a leaf flag, and the unit its offset leads to the
  // output's place.
  for (size_t i = 0; i < trie_.size(); ++i) {
    const uint32_t unit = trie_[i];
    if ((unit >> 31) != 0 || !HasLeaf(unit)) continue;  // A value; no leaf.
    const size_t leaf = i ^ Offset(unit);
    if (leaf >= trie_.size() || Value(trie_[leaf]) >= outputs_.size()) {
      Fail("a rule's output lies outside the map");
    }
  }
}

std::pair<std::string_view, size_t> CharsMapNormalizer::NormalizePrefix(
    std::string_view text) const {
  // Darts' common-prefix search: the longest of the first kMaxMatches rules
  // that match.
  size_t longest = 0;
  uint32_t longest_value = 0;
  size_t matches = 0;
  uint32_t id = Offset(trie_[0]);
  const size_t limit = std::min(text.size(), kMaxRuleBytes);
  for (size_t i = 0; i < limit && matches < kMaxMatches; ++i) {
    const auto key = static_cast<unsigned char>(text[i]);
    id ^= key;
    if (id >= trie_.size() || Label(trie_[id]) != key) break;
    const uint32_t unit = trie_[id];
    id ^= Offset(unit);
    if (HasLeaf(unit)) {
      if (id >= trie_.size()) break;
      ++matches;
      longest = i + 1;
      longest_value = Value(trie_[id]);
    }
  }
  if (longest > 0) {
    // Inside the outputs, NUL-terminated within kMaxOutputBytes (checked
    // at load).
    const char* output = outputs_.data() + longest_value;
    return {std::string_view(output, std::strlen(output)), longest};
  }
  const size_t length = ValidCharacterLength(text);
  if (length == 0) return {kReplacementCharacter, 1};
  return {text.substr(0, length), length};
}

std::string CharsMapNormalizer::Normalize(std::string_view text,
                                          bool* leading_space) const {
  std::string normalized;
  normalized.reserve(text.size());
  // Spaces at the start go; then each run of spaces the outputs make
  // becomes one.
  bool previous_space = true;
  bool leading = false;
  while (!text.empty()) {
    const auto [output, consumed] = NormalizePrefix(text);
    text.remove_prefix(consumed);
    std::string_view rest = output;
    if (previous_space) {
      const size_t spaces = std::min(rest.find_first_not_of(' '), rest.size());
      if (spaces > 0 && normalized.empty()) leading = true;
      rest.remove_prefix(spaces);
    }
    if (rest.empty()) continue;
    normalized.append(rest);
    previous_space = rest.back() == ' ';
  }
  // SentencePiece trims its escaped text, where spaces are "▁": a "▁" of
  // the text's own at the end goes too.
  constexpr std::string_view kWordStart = "\xE2\x96\x81";
  while (!normalized.empty()) {
    if (normalized.back() == ' ') {
      normalized.pop_back();
    } else if (std::string_view(normalized)
                   .substr(normalized.size() >= 3 ? normalized.size() - 3
                                                  : 0) == kWordStart) {
      normalized.resize(normalized.size() - 3);
    } else {
      break;
    }
  }
  if (leading_space != nullptr) *leading_space = leading;
  return normalized;
}

}  // namespace fanyi
