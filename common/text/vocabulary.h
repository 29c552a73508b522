// Token <-> id mapping shared by the trainer and the server.
#ifndef FANYI_COMMON_TEXT_VOCABULARY_H_
#define FANYI_COMMON_TEXT_VOCABULARY_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace fanyi {

// A fixed token list with the special tokens at ids 0-3, stored as JSON:
// {"format": "fanyi-vocabulary", "format_version": 1, "tokens": [...]}
// (and "special_names": "model" when the model names its specials).
class Vocabulary {
 public:
  // How the specials at ids 0-3 are written: as fanyi writes them
  // (kPadToken, kUnkToken, kBosToken, kEosToken), or as a model from
  // elsewhere writes its own (an imported CTranslate2 model's "<unk>" and
  // "</s>" keep their strings; rows fanyi adds get names no token has).
  enum class SpecialNames { kFanyi, kModel };

  static constexpr int64_t kPadId = 0;
  static constexpr int64_t kUnkId = 1;
  static constexpr int64_t kBosId = 2;
  static constexpr int64_t kEosId = 3;
  static constexpr const char* kPadToken = "<pad>";
  static constexpr const char* kUnkToken = "<unk>";
  static constexpr const char* kBosToken = "<s>";
  static constexpr const char* kEosToken = "</s>";
  static constexpr int kFormatVersion = 1;

  // Builds a vocabulary from tokenized sentences: tokens seen at least
  // `min_count` times, most frequent first (ties by token), at most
  // `max_size` entries including the 4 specials (0 = unlimited). Throws
  // std::invalid_argument for min_count < 0, max_size < 0 or 1 <= max_size < 4.
  static Vocabulary Build(
      const std::vector<std::vector<std::string>>& sentences, int64_t min_count,
      int64_t max_size);

  // The same from counts of tokens already made (a corpus counted in
  // parallel, chunk by chunk).
  static Vocabulary FromCounts(std::unordered_map<std::string, int64_t> counts,
                               int64_t min_count, int64_t max_size);

  // Reads a vocabulary file; throws std::runtime_error naming the file and
  // the problem.
  static Vocabulary Load(const std::string& path);

  // Creates a vocabulary from a complete token list (specials first);
  // throws std::invalid_argument on duplicates, empty tokens or, with
  // SpecialNames::kFanyi, misplaced specials.
  explicit Vocabulary(std::vector<std::string> tokens,
                      SpecialNames special_names = SpecialNames::kFanyi);

  // Writes the vocabulary as JSON; throws std::runtime_error on failure.
  void Save(const std::string& path) const;

  // Number of tokens including the specials.
  int64_t size() const;

  // Id of `token`, or kUnkId when it is not in the vocabulary.
  int64_t Id(const std::string& token) const;

  // Token of `id`; throws std::out_of_range for ids outside [0, size()).
  const std::string& Token(int64_t id) const;

  // Maps tokens to ids (unknown tokens to kUnkId), without <s> or </s>.
  std::vector<int64_t> Encode(const std::vector<std::string>& tokens) const;

  // Maps ids to tokens, stopping at </s> and skipping <pad> and <s>.
  std::vector<std::string> Decode(const std::vector<int64_t>& ids) const;

  SpecialNames special_names() const { return special_names_; }

 private:
  std::vector<std::string> tokens_;
  SpecialNames special_names_;
  std::unordered_map<std::string, int64_t> ids_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_VOCABULARY_H_
