#ifndef FANYI_BENCH_WEIGHT_EXPORT_H_
#define FANYI_BENCH_WEIGHT_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace fanyi {

// Version of the export layout, written into the manifest so that readers
// (scripts/convert_ctranslate2.py) can refuse a layout they do not know.
inline constexpr int kWeightExportFormatVersion = 1;

// One tensor as written by ExportWeights.
struct ExportedTensor {
  std::string name;            // Module path, e.g. "encoder_layers.0.ff".
  std::vector<int64_t> shape;  // Row-major shape.
  std::string file;            // File name inside the export directory.
};

// What ExportCheckpointWeights wrote.
struct WeightExport {
  std::string model_version;            // From the checkpoint's config.
  std::vector<ExportedTensor> tensors;  // In manifest order.
};

// Loads the checkpoint in `model_dir` (on the CPU) and writes every named
// parameter and buffer of its model into `directory` as raw little-endian
// float32 (row-major, no header), one file per tensor, plus manifest.json
// listing name, shape and file of each. The point is that a reader needs
// nothing but numpy (np.fromfile), no torch. Keeps torch out of this header
// so that a main with absl flags can include it. Throws std::runtime_error
// naming the file on any load or I/O failure.
WeightExport ExportCheckpointWeights(const std::string& model_dir,
                                     const std::string& directory);

}  // namespace fanyi

#endif  // FANYI_BENCH_WEIGHT_EXPORT_H_
