#ifndef FANYI_COMMON_MODEL_CHECKPOINT_H_
#define FANYI_COMMON_MODEL_CHECKPOINT_H_

#include <functional>
#include <string>

#include "common/model/checkpoint_contents.h"
#include "common/model/transformer.h"

namespace fanyi {

// Writes `checkpoint` to `directory` atomically: everything goes to a
// temporary sibling directory that is renamed into place, so a crash never
// leaves half a checkpoint. Extra files (e.g. optimizer state) may be added
// to the temporary directory by `write_extra`.
void SaveCheckpoint(
    const Checkpoint& checkpoint, const std::string& directory,
    const std::function<void(const std::string&)>& write_extra = nullptr);

// Loads a checkpoint directory (or a training output directory holding
// best/) onto `device`. Checks the format version, the vocabulary sizes and
// every tensor's name and shape; throws std::runtime_error naming the file.
// A CTranslate2 model directory is imported (ImportCt2Model), and so is an
// Argos Translate package, directory or .argosmodel file
// (ImportArgosPackage).
Checkpoint LoadCheckpoint(const std::string& directory,
                          const torch::Device& device);

// The checkpoint directory that `path` names: `path` itself, or path/best
// when `path` is a training output directory.
std::string ResolveCheckpointDirectory(const std::string& path);

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CHECKPOINT_H_
