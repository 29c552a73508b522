#include "common/text/subword_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <queue>
#include <utility>

#include "common/text/wire_reader.h"

namespace fanyi {
namespace {

constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581 "▁"

// SentencePiece's penalty below the lowest piece score for a character no
// piece covers (unigram_model.h, kUnkPenalty).
constexpr float kUnknownPenalty = 10.0f;

// SentencePiece's enums and fields, as numbered in its
// sentencepiece_model.proto.
constexpr uint64_t kNormalPiece = 1;
constexpr uint64_t kUserDefinedPiece = 4;
constexpr uint64_t kBytePiece = 6;
constexpr uint64_t kSplitByWhitespace = 22;  // TrainerSpec's fields.
constexpr uint64_t kTreatWhitespaceAsSuffix = 24;
constexpr uint64_t kByteFallback = 35;

// What a model's pieces may be: log-probabilities of pieces of up to 16
// characters by default (max_sentencepiece_length).
constexpr float kMaxScore = 1e6f;
constexpr size_t kMaxPieceBytes = 256;
constexpr uint64_t kUnigramModel = 1;
constexpr uint64_t kBpeModel = 2;

// The length in bytes of the UTF-8 character that starts with `lead`
// (1 for a stray continuation byte, so that every byte is consumed).
size_t CharacterLength(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

}  // namespace

SubwordModel SubwordModel::FromSerialized(std::string serialized) {
  SubwordModel model;
  uint64_t model_type = kUnigramModel;
  std::string normalization = "identity";
  std::string_view charsmap;  // Its precompiled_charsmap, if any.
  float lowest = std::numeric_limits<float>::infinity();
  WireReader reader(serialized);
  while (!reader.done()) {
    const auto [field, wire_type] = reader.Tag();
    if (field == 1 && wire_type == 2) {  // pieces
      WireReader piece_reader(reader.Bytes());
      std::string piece;
      float score = 0;
      uint64_t type = kNormalPiece;
      while (!piece_reader.done()) {
        const auto [piece_field, piece_wire] = piece_reader.Tag();
        if (piece_field == 1 && piece_wire == 2) {
          piece = std::string(piece_reader.Bytes());
        } else if (piece_field == 2 && piece_wire == 5) {
          score = piece_reader.Float();
        } else if (piece_field == 3 && piece_wire == 0) {
          type = piece_reader.Varint();
        } else {
          piece_reader.Skip(piece_wire);
        }
      }
      if (type == kUserDefinedPiece || type == kBytePiece) {
        WireReader::Fail(
            "a user-defined or byte piece, which SentencePiece matches in "
            "ways this reader does not");
      }
      // Unknown, control and unused pieces never match text.
      if (type != kNormalPiece || piece.empty()) continue;
      // Log-probabilities: a score far outside them would overflow the
      // search's sums; a long piece would make it slow.
      if (!(std::fabs(score) <= kMaxScore)) {
        WireReader::Fail("a piece scored " + std::to_string(score));
      }
      if (piece.size() > kMaxPieceBytes) {
        WireReader::Fail("a piece longer than " +
                         std::to_string(kMaxPieceBytes) + " bytes");
      }
      model.longest_piece_ = std::max(model.longest_piece_, piece.size());
      lowest = std::min(lowest, score);
      model.scores_.emplace(std::move(piece), score);
    } else if (field == 2 && wire_type == 2) {  // trainer_spec
      WireReader spec(reader.Bytes());
      while (!spec.done()) {
        const auto [spec_field, spec_wire] = spec.Tag();
        if (spec_field == 3 && spec_wire == 0) {
          model_type = spec.Varint();
        } else if (spec_wire == 0 && (spec_field == kSplitByWhitespace ||
                                      spec_field == kTreatWhitespaceAsSuffix ||
                                      spec_field == kByteFallback)) {
          // Only SentencePiece's defaults: words split at spaces, "▁" in
          // front, no bytes for unknown characters.
          const bool set = spec.Varint() != 0;
          if (set != (spec_field == kSplitByWhitespace)) {
            WireReader::Fail(
                "a model trained with split_by_whitespace=false, "
                "treat_whitespace_as_suffix or byte_fallback");
          }
        } else {
          spec.Skip(spec_wire);
        }
      }
    } else if (field == 3 && wire_type == 2) {  // normalizer_spec
      WireReader spec(reader.Bytes());
      while (!spec.done()) {
        const auto [spec_field, spec_wire] = spec.Tag();
        if (spec_field == 1 && spec_wire == 2) {
          normalization = std::string(spec.Bytes());
        } else if (spec_field == 2 && spec_wire == 2) {
          charsmap = spec.Bytes();
        } else if (spec_field >= 3 && spec_field <= 5 && spec_wire == 0) {
          // add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces:
          // SubwordModel::Encode does all three.
          if (spec.Varint() == 0) {
            WireReader::Fail(
                "a model without SentencePiece's default whitespace handling");
          }
        } else {
          spec.Skip(spec_wire);
        }
      }
    } else {
      reader.Skip(wire_type);
    }
  }
  if (model_type != kUnigramModel && model_type != kBpeModel) {
    WireReader::Fail("model type " + std::to_string(model_type) +
                     "; fanyi reads unigram (1) and BPE (2) models");
  }
  model.bpe_ = model_type == kBpeModel;
  // SentencePiece normalizes by the map alone; the rule's name says what it
  // was made from. A named rule without a map is a model cut short.
  if (!charsmap.empty()) {
    model.normalizer_ = std::make_shared<const CharsMapNormalizer>(charsmap);
  } else if (normalization != "identity") {
    WireReader::Fail("normalization rule \"" + normalization +
                     "\" without its precompiled map");
  }
  if (model.scores_.empty()) WireReader::Fail("no pieces");
  model.unknown_score_ = lowest - kUnknownPenalty;
  model.serialized_ = std::move(serialized);
  return model;
}

std::vector<std::string> SubwordModel::Encode(std::string_view text,
                                              bool continues_word) const {
  std::string normalized;
  if (normalizer_) {
    bool leading_space = false;
    normalized = normalizer_->Normalize(text, &leading_space);
    text = normalized;
    continues_word = continues_word && !leading_space;
  }
  std::vector<std::string> pieces;
  std::string word;
  float path_score = 0;  // Of the words so far (EncodeWord).
  size_t start = 0;
  while (start < text.size()) {
    // Words are separated by spaces, as SentencePiece's whitespace handling
    // has it (runs of spaces count as one; no other character separates).
    const size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) {
      word.assign(start == 0 && continues_word ? "" : kWordStart);
      word.append(text.substr(start, end - start));
      EncodeWord(word, &pieces, &path_score);
    }
    start = end + 1;
  }
  return pieces;
}

void SubwordModel::EncodeWord(std::string_view word,
                              std::vector<std::string>* pieces,
                              float* path_score) const {
  if (bpe_) {
    EncodeWordByMerges(word, pieces);
    return;
  }
  const size_t n = word.size();
  constexpr float kUnreached = -std::numeric_limits<float>::infinity();
  // best[i]: the highest score of a segmentation of word[0, i); from[i]:
  // where its last piece starts; unknown[i]: whether that piece is a
  // character no piece covers.
  std::vector<float> best(n + 1, kUnreached);
  std::vector<size_t> from(n + 1, 0);
  std::vector<char> unknown(n + 1, 0);
  // SentencePiece searches the whole text at once: scores accumulate from
  // the text's start, and float rounding at that magnitude decides ties.
  best[0] = *path_score;
  for (size_t begin = 0; begin < n;
       begin += CharacterLength(static_cast<unsigned char>(word[begin]))) {
    if (best[begin] == kUnreached) continue;
    const size_t first_length = std::min(
        n - begin, CharacterLength(static_cast<unsigned char>(word[begin])));
    bool single_character_piece = false;
    // Candidates shortest first and a new best only when strictly better,
    // the order SentencePiece's Viterbi search visits them in.
    for (size_t end = begin + first_length;
         end <= n && end - begin <= longest_piece_;
         end +=
         end < n ? CharacterLength(static_cast<unsigned char>(word[end])) : 1) {
      const auto it =
          scores_.find(std::string(word.substr(begin, end - begin)));
      if (it != scores_.end()) {
        if (end == begin + first_length) single_character_piece = true;
        // In double, against the float kept, as SentencePiece's search
        // computes it (a double constant makes its piece scores double):
        // this decides between segmentations whose float sums tie.
        const double score = double{best[begin]} + double{it->second};
        if (score > best[end]) {
          best[end] = static_cast<float>(score);
          from[end] = begin;
          unknown[end] = 0;
        }
      }
      if (end == n) break;
    }
    if (!single_character_piece) {
      const size_t end = begin + first_length;
      const float score = best[begin] + unknown_score_;
      if (score > best[end]) {
        best[end] = score;
        from[end] = begin;
        unknown[end] = 1;
      }
    }
  }
  *path_score = best[n];
  // Back from the end; consecutive unknown characters become one piece.
  std::vector<std::pair<size_t, size_t>> spans;  // [begin, end), reversed.
  std::vector<char> span_unknown;
  for (size_t end = n; end > 0; end = from[end]) {
    const size_t begin = from[end];
    if (unknown[end] && !span_unknown.empty() && span_unknown.back()) {
      spans.back().first = begin;
    } else {
      spans.emplace_back(begin, end);
      span_unknown.push_back(unknown[end]);
    }
  }
  for (size_t i = spans.size(); i-- > 0;) {
    pieces->emplace_back(
        word.substr(spans[i].first, spans[i].second - spans[i].first));
  }
}

void SubwordModel::EncodeWordByMerges(std::string_view word,
                                      std::vector<std::string>* pieces) const {
  // The word's characters, merged pair by pair: a symbol is a span of the
  // word, linked to its neighbours; a merged-away symbol is empty.
  struct Symbol {
    size_t begin;
    size_t end;
    int prev;
    int next;
  };
  std::vector<Symbol> symbols;
  for (size_t begin = 0; begin < word.size();) {
    const size_t end = std::min(
        word.size(),
        begin + CharacterLength(static_cast<unsigned char>(word[begin])));
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({begin, end, index - 1, index + 1});
    begin = end;
  }
  if (symbols.empty()) return;
  symbols.back().next = -1;
  // Adjacent symbols whose joint text is a piece, highest score first and,
  // among equal scores, leftmost first, as SentencePiece's BPE encoder
  // takes them.
  struct Candidate {
    float score;
    int left;
    int right;
    size_t size;  // Bytes of the joint text when queued.
  };
  auto lower = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(lower)>
      agenda(lower);
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t begin = symbols[left].begin;
    const size_t size = symbols[right].end - begin;
    const auto it = scores_.find(std::string(word.substr(begin, size)));
    if (it != scores_.end()) agenda.push({it->second, left, right, size});
  };
  for (size_t i = 1; i < symbols.size(); ++i) {
    consider(static_cast<int>(i) - 1, static_cast<int>(i));
  }
  while (!agenda.empty()) {
    const Candidate top = agenda.top();
    agenda.pop();
    Symbol& left = symbols[top.left];
    Symbol& right = symbols[top.right];
    // Stale: a side was merged away, or into another symbol, since.
    if (left.begin == left.end || right.begin == right.end ||
        left.next != top.right || right.end - left.begin != top.size) {
      continue;
    }
    left.end = right.end;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.left;
    right.begin = right.end;
    consider(left.prev, top.left);
    consider(top.left, left.next);
  }
  // Consecutive characters no piece covers become one piece (<unk> to the
  // Vocabulary), as SentencePiece's encoder joins its unknown pieces.
  bool last_unknown = false;
  for (int i = 0; i >= 0; i = symbols[i].next) {
    const std::string_view piece =
        word.substr(symbols[i].begin, symbols[i].end - symbols[i].begin);
    const bool unknown = scores_.count(std::string(piece)) == 0;
    if (unknown && last_unknown) {
      pieces->back().append(piece);
    } else {
      pieces->emplace_back(piece);
    }
    last_unknown = unknown;
  }
}

std::string SubwordModel::Decode(const std::vector<std::string>& pieces) {
  std::string text;
  for (const std::string& piece : pieces) {
    size_t start = 0;
    while (start < piece.size()) {
      const size_t mark = piece.find(kWordStart, start);
      text.append(piece, start, std::min(mark, piece.size()) - start);
      if (mark == std::string::npos) break;
      text.push_back(' ');
      start = mark + kWordStart.size();
    }
  }
  if (!text.empty() && text.front() == ' ') text.erase(0, 1);
  return text;
}

}  // namespace fanyi
