// fanyi-export: writes a checkpoint's weights as raw float32 files plus a JSON
// manifest, so that tools without torch (numpy alone) can read them; the
// CTranslate2 converter (scripts/convert_ctranslate2.py) starts from here.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "bench/weight_export.h"
#include "common/model/cpu_threading.h"

// Flags live here, away from torch headers, whose glog/gflags globals clash.
ABSL_FLAG(std::string, model_dir, "",
          "Checkpoint (or training output) directory.");
ABSL_FLAG(std::string, out, "", "Directory to write the tensors into.");

namespace {

int Run() {
  const std::string model_dir = absl::GetFlag(FLAGS_model_dir);
  const std::string out = absl::GetFlag(FLAGS_out);
  if (model_dir.empty() || out.empty()) {
    std::cerr << "fanyi-export: --model_dir and --out are required\n";
    return 1;
  }
  const fanyi::WeightExport exported =
      fanyi::ExportCheckpointWeights(model_dir, out);
  int64_t values = 0;
  for (const auto& tensor : exported.tensors) {
    int64_t count = 1;
    for (int64_t dimension : tensor.shape) count *= dimension;
    values += count;
  }
  std::cout << "model " << exported.model_version << ": "
            << exported.tensors.size() << " tensors, " << values
            << " float32 values -> " << out << "/manifest.json\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  fanyi::EnsureCpuThreadingEnvironment(argv);
  absl::SetProgramUsageMessage(
      "Exports checkpoint weights as raw float32 + manifest.json.\n"
      "  fanyi-export --model_dir models/en-zh --out /tmp/en-zh-export");
  absl::ParseCommandLine(argc, argv);
  try {
    return Run();
  } catch (const std::exception& error) {
    std::cerr << "fanyi-export: " << error.what() << "\n";
    return 1;
  }
}
