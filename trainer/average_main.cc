// fanyi-average: averages the weights of checkpoints from one training run
// (fanyi-train --average_last N keeps the last N saves in OUT/epochs/ and
// averages them itself when training ends).
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "common/model/checkpoint_averaging.h"

ABSL_FLAG(std::string, out, "", "Directory for the averaged checkpoint.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Averages the weights of checkpoints of one training run.\n"
      "Usage: fanyi-average --out DIR CHECKPOINT_DIR...");
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty() || positional.size() < 2) {
    std::cerr << "usage: fanyi-average --out DIR CHECKPOINT_DIR...\n";
    return 2;
  }
  const std::vector<std::string> directories(positional.begin() + 1,
                                             positional.end());
  try {
    fanyi::SaveCheckpoint(fanyi::AverageCheckpoints(directories), out);
  } catch (const std::exception& e) {
    std::cerr << "fanyi-average: " << e.what() << "\n";
    return 1;
  }
  std::cout << "averaged " << directories.size() << " checkpoints into " << out
            << "\n";
  return 0;
}
