// libFuzzer target: SubwordModel::FromSerialized on arbitrary model bytes
// (a SentencePiece model file, its normalization map included), then Encode
// on arbitrary text.
//
// Input: one byte n, n bytes of text, then the model's bytes.
// Properties: FromSerialized either returns a model or throws
// std::invalid_argument (nothing else escapes, nothing crashes); a loaded
// model encodes any bytes without throwing, into non-empty pieces whose
// total length stays within a bounded multiple of the text's (a map's
// outputs are at most CharsMapNormalizer::kMaxOutputBytes each).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "common/text/subword_model.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t text_size = std::min<size_t>(data[0], size - 1);
  const std::string_view text(reinterpret_cast<const char*>(data + 1),
                              text_size);
  std::string model_bytes(reinterpret_cast<const char*>(data + 1 + text_size),
                          size - 1 - text_size);
  std::optional<fanyi::SubwordModel> model;
  try {
    model.emplace(fanyi::SubwordModel::FromSerialized(std::move(model_bytes)));
  } catch (const std::invalid_argument&) {
    return 0;  // A clean, documented rejection of a malformed model.
  }
  for (const bool continues_word : {false, true}) {
    size_t total = 0;
    for (const std::string& piece : model->Encode(text, continues_word)) {
      fanyi::fuzzing::FuzzCheck(!piece.empty(), "an empty piece");
      total += piece.size();
    }
    // Each input byte gives at most one map output, each output space a
    // "▁" (3 bytes), plus one "▁" before each word.
    const size_t bound = (text.size() + 1) * 3 *
                         (fanyi::CharsMapNormalizer::kMaxOutputBytes + 1);
    fanyi::fuzzing::FuzzCheck(total <= bound, "pieces out of proportion");
  }
  return 0;
}
