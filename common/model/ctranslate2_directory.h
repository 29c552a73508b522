#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_DIRECTORY_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_DIRECTORY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/model/ctranslate2_file.h"
#include "common/model/ctranslate2_transformer.h"

namespace fanyi {

// A CTranslate2 vocabulary file: a JSON array of strings (.json) or one
// token a line (.txt, as CTranslate2 reads it: a '\r' stays in its token).
// Throws std::runtime_error for a file over 64 MiB or 4,194,304 tokens, an
// empty one, or JSON that is not an array of strings.
std::vector<std::string> ReadCt2Vocabulary(const std::string& path);

// A model directory's vocabularies: shared_vocabulary.{json,txt}, or
// source_vocabulary.* and target_vocabulary.*.
struct Ct2Vocabularies {
  std::vector<std::string> source;
  std::vector<std::string> target;
  bool shared = false;
};
Ct2Vocabularies ReadCt2Vocabularies(const std::string& model_dir);

// A CTranslate2 model directory read and checked as a whole: model.bin and
// its Transformer's options, config.json (at most 1 MiB; optional, as for
// older models), the vocabularies, whose sizes must be the embeddings', and
// the ids of the tokens the options name, each of which must be in its
// vocabulary. Throws std::runtime_error naming the file and what is wrong.
struct Ct2Directory {
  Ct2ModelFile model;
  Ct2TransformerOptions options;
  Ct2Vocabularies vocabularies;
  int64_t source_unk_id = 0;
  std::optional<int64_t> source_bos_id;  // When sources start with it,
  std::optional<int64_t> source_eos_id;  //   or end with it.
  int64_t target_unk_id = 0;
  int64_t target_eos_id = 0;
  std::optional<int64_t> decoder_start_id;  // Nullopt: the caller's prefix.
};
Ct2Directory ReadCt2Directory(const std::string& model_dir);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_DIRECTORY_H_
