// libFuzzer target: Vocabulary::Load on arbitrary file contents.
//
// Properties: Load either returns a vocabulary or throws std::runtime_error
// (nothing else escapes, nothing crashes); a loaded vocabulary has the four
// specials at ids 0-3, maps every token back to its own id, and survives a
// Save/Load round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/text/vocabulary.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/fuzz_files.h"

namespace fanyi::fuzzing {
namespace {

void CheckLoadedVocabulary(const Vocabulary& vocabulary,
                           const std::string& copy_path) {
  FuzzCheck(vocabulary.size() >= 4, "loaded vocabulary misses the specials");
  FuzzCheck(vocabulary.Token(Vocabulary::kPadId) == Vocabulary::kPadToken &&
                vocabulary.Token(Vocabulary::kUnkId) == Vocabulary::kUnkToken &&
                vocabulary.Token(Vocabulary::kBosId) == Vocabulary::kBosToken &&
                vocabulary.Token(Vocabulary::kEosId) == Vocabulary::kEosToken,
            "special tokens are not at ids 0-3");
  for (int64_t id = 0; id < vocabulary.size(); ++id) {
    FuzzCheck(vocabulary.Id(vocabulary.Token(id)) == id,
              "token " + std::to_string(id) + " maps to another id");
  }
  vocabulary.Save(copy_path);
  const Vocabulary copy = Vocabulary::Load(copy_path);
  FuzzCheck(copy.size() == vocabulary.size(), "Save/Load changed the size");
  for (int64_t id = 0; id < vocabulary.size(); ++id) {
    FuzzCheck(copy.Token(id) == vocabulary.Token(id),
              "Save/Load changed token " + std::to_string(id));
  }
}

}  // namespace
}  // namespace fanyi::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string directory =
      fanyi::fuzzing::MakeScratchDirectory("vocabulary-fuzzer");
  const std::string path = directory + "/vocab.json";
  fanyi::fuzzing::WriteFileOrDie(path, data, size);
  std::optional<fanyi::Vocabulary> vocabulary;
  try {
    vocabulary.emplace(fanyi::Vocabulary::Load(path));
  } catch (const std::runtime_error&) {
    return 0;  // A clean, documented rejection of a malformed file.
  }
  fanyi::fuzzing::CheckLoadedVocabulary(*vocabulary, directory + "/copy.json");
  return 0;
}
