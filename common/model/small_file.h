// The small files a model holds beside its weights (configurations,
// vocabularies, SentencePiece models), read with bounds: a model directory
// or package is input like any other.
#ifndef FANYI_COMMON_MODEL_SMALL_FILE_H_
#define FANYI_COMMON_MODEL_SMALL_FILE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "common/text/subword_model.h"

namespace fanyi {

// A regular file's bytes, refused over `limit`: the size is checked on the
// descriptor that is read (not the path, which may change in between; a
// FIFO or a device is refused without blocking), and no more than `limit`
// + 1 bytes are read, should the file grow. Throws std::runtime_error
// naming the file.
std::string ReadSmallFile(const std::string& path, int64_t limit);

// A SentencePiece model file of at most 64 MiB. Throws std::runtime_error
// naming the file when it cannot be read or is refused.
std::shared_ptr<const SubwordModel> ReadSubwordModelFile(
    const std::string& path);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_SMALL_FILE_H_
