#include "bench/weight_export.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/model/checkpoint.h"

namespace fanyi {
namespace {

namespace fs = std::filesystem;

// The raw files are meant to be read with numpy's "<f4"; writing the bytes
// of host floats is only that on a little-endian machine.
bool HostIsLittleEndian() {
  const uint32_t probe = 1;
  return *reinterpret_cast<const unsigned char*>(&probe) == 1;
}

void WriteRawFloats(const torch::Tensor& tensor, const fs::path& path) {
  // Contiguous float32 on the CPU: the bytes are then the row-major values.
  const torch::Tensor host =
      tensor.detach().to(torch::kCPU, torch::kFloat).contiguous();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(host.data_ptr<float>()),
            static_cast<std::streamsize>(host.numel() * sizeof(float)));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::vector<ExportedTensor> ExportWeights(TransformerImpl& model,
                                          const std::string& directory) {
  if (!HostIsLittleEndian()) {
    throw std::runtime_error(
        "weight export writes little-endian float32; this host is big-endian");
  }
  const fs::path root(directory);
  fs::create_directories(root);

  // Parameters first, then buffers (the position table); names are the
  // dotted module paths that torch gives, unique across both lists.
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& parameter : model.named_parameters()) {
    tensors.emplace_back(parameter.key(), parameter.value());
  }
  for (const auto& buffer : model.named_buffers()) {
    tensors.emplace_back(buffer.key(), buffer.value());
  }

  std::vector<ExportedTensor> exported;
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& [name, tensor] : tensors) {
    ExportedTensor entry{
        name, {tensor.sizes().begin(), tensor.sizes().end()}, name + ".f32"};
    WriteRawFloats(tensor, root / entry.file);
    entries.push_back(
        {{"name", entry.name}, {"shape", entry.shape}, {"file", entry.file}});
    exported.push_back(std::move(entry));
  }

  const nlohmann::json manifest = {
      {"format", "fanyi-weight-export"},
      {"format_version", kWeightExportFormatVersion},
      {"dtype", "float32"},
      {"byte_order", "little"},
      {"tensors", entries},
  };
  const fs::path manifest_path = root / "manifest.json";
  std::ofstream out(manifest_path, std::ios::trunc);
  out << manifest.dump(2) << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write " + manifest_path.string());
  return exported;
}

}  // namespace

WeightExport ExportCheckpointWeights(const std::string& model_dir,
                                     const std::string& directory) {
  Checkpoint checkpoint = LoadCheckpoint(model_dir, torch::Device(torch::kCPU));
  return {checkpoint.model_version,
          ExportWeights(*checkpoint.model, directory)};
}

}  // namespace fanyi
