#include "common/model/ctranslate2_vocabulary_map.h"

#include <array>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "common/model/ctranslate2_transformer.h"

namespace fanyi {
namespace {

// One of fanyi's four special ids on one side: a CTranslate2 token moved
// there (keeping its string), or a row fanyi adds, of zeros or a copy of
// CTranslate2's row `copy_of`, named `name`. The names hold a space, which
// no token has (MapSide refuses them), so that no tokenizer and no line of
// pieces ever reaches an added row.
struct Special {
  std::optional<int64_t> moved;
  int64_t copy_of = -1;
  const char* name = "";
};
constexpr const char* kAddedPad = "<fanyi pad>";
constexpr const char* kAddedStart = "<fanyi start>";
constexpr const char* kAddedEnd = "<fanyi end>";

Ct2VocabularyMap MapSide(const std::vector<std::string>& ct2_tokens,
                         const std::array<Special, 4>& specials,
                         const std::string& vocabulary_name) {
  std::unordered_map<std::string, int64_t> seen;
  for (size_t i = 0; i < ct2_tokens.size(); ++i) {
    if (ct2_tokens[i].empty()) {
      throw std::runtime_error(vocabulary_name + ": entry " +
                               std::to_string(i) + " is an empty token");
    }
    // Pieces travel as lines of space-separated tokens (fanyi-eval
    // --tokens, CTranslate2's own tools); no tokenizer makes these.
    for (const char c : ct2_tokens[i]) {
      if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
        throw std::runtime_error(
            vocabulary_name + ": entry " + std::to_string(i) +
            " holds a space or a control character (byte " +
            std::to_string(static_cast<unsigned char>(c)) +
            "), which no tokenizer makes");
      }
    }
    const auto [at, inserted] =
        seen.emplace(ct2_tokens[i], static_cast<int64_t>(i));
    if (!inserted) {
      throw std::runtime_error(
          vocabulary_name + ": entry " + std::to_string(i) + " repeats \"" +
          ct2_tokens[i] + "\" (entry " + std::to_string(at->second) + ")");
    }
  }
  Ct2VocabularyMap map;
  std::unordered_set<int64_t> moved;
  for (size_t id = 0; id < specials.size(); ++id) {
    const Special& special = specials[id];
    if (special.moved) {
      if (!moved.insert(*special.moved).second) {
        throw std::runtime_error(vocabulary_name + ": \"" +
                                 ct2_tokens[*special.moved] +
                                 "\" is named for two special tokens");
      }
      map.tokens.push_back(ct2_tokens[*special.moved]);
      map.rows.push_back(*special.moved);
      continue;
    }
    map.tokens.push_back(special.name);
    map.rows.push_back(special.copy_of);
    map.added.push_back(static_cast<int64_t>(id));
  }
  for (size_t i = 0; i < ct2_tokens.size(); ++i) {
    if (moved.count(static_cast<int64_t>(i)) != 0) continue;
    map.tokens.push_back(ct2_tokens[i]);
    map.rows.push_back(static_cast<int64_t>(i));
  }
  return map;
}

std::optional<int64_t> Find(const std::vector<std::string>& tokens,
                            const std::string& token) {
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] == token) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

}  // namespace

Ct2VocabularyMap MapCt2Target(const Ct2Directory& directory,
                              const std::string& name) {
  const int64_t start = *directory.decoder_start_id;
  Special start_row{std::nullopt, start, kAddedStart};
  if (directory.options.decoder.start_from_zero_embedding) {
    start_row.copy_of = -1;
  } else if (start != directory.target_eos_id &&
             start != directory.target_unk_id) {
    start_row.moved = start;
  }
  return MapSide(
      directory.vocabularies.target,
      {Special{std::nullopt, -1, kAddedPad}, Special{directory.target_unk_id},
       start_row, Special{directory.target_eos_id}},
      name);
}

Ct2VocabularyMap MapCt2Source(const Ct2Directory& directory,
                              const std::string& name) {
  const std::vector<std::string>& tokens = directory.vocabularies.source;
  const Ct2TransformerOptions& options = directory.options;
  auto special = [&](const std::string& token, const char* name) {
    Special row{std::nullopt, -1, name};
    std::optional<int64_t> id = Find(tokens, token);
    if (id && *id != directory.source_unk_id) row.moved = id;
    return row;
  };
  Special bos = special(options.bos_token, kAddedStart);
  Special eos = special(options.eos_token, kAddedEnd);
  if (bos.moved && bos.moved == eos.moved) bos.moved.reset();
  return MapSide(tokens,
                 {Special{std::nullopt, -1, kAddedPad},
                  Special{directory.source_unk_id}, bos, eos},
                 name);
}

}  // namespace fanyi
