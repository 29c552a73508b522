// Creating the directories fanyi-train and fanyi-prepare write to.
#ifndef FANYI_TRAINER_OUTPUT_DIRECTORY_H_
#define FANYI_TRAINER_OUTPUT_DIRECTORY_H_

#include <string>

namespace fanyi {

// Creates `directory` and its parents unless they exist, and checks that
// this process may write there. Throws std::runtime_error naming the
// directory, the user and group the process runs as and what to do: in a
// container that runs as a fixed user (the images: 10001), a volume owned
// by another is the usual cause.
void CreateWritableDirectory(const std::string& directory);

}  // namespace fanyi

#endif  // FANYI_TRAINER_OUTPUT_DIRECTORY_H_
