// libFuzzer target: a CTranslate2 model.bin on arbitrary bytes (seeds:
// models that CTranslate2's specs wrote, tests/ctranslate2_models.py).
//
// Ct2ModelFile::FromBytes checks the file whole, so what it accepts must
// read without a crash: every variable as floats, an integer and a string
// (each either a value or std::runtime_error), then the Transformer options
// (the options or std::runtime_error). Never another exception, a crash,
// undefined behaviour, or an allocation the bytes do not justify.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/model/ctranslate2_file.h"
#include "common/model/ctranslate2_transformer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<fanyi::Ct2ModelFile> file;
  try {
    file = fanyi::Ct2ModelFile::FromBytes(
        std::string(reinterpret_cast<const char*>(data), size), "model.bin");
  } catch (const std::runtime_error&) {
    return 0;
  }
  for (const std::string& name : file->VariableNames()) {
    for (int read = 0; read < 3; ++read) {
      try {
        if (read == 0) file->Float(name);
        if (read == 1) file->Integer(name);
        if (read == 2) file->Text(name);
      } catch (const std::runtime_error&) {
      }
    }
  }
  try {
    fanyi::ReadCt2TransformerOptions(*file, "", "config.json");
  } catch (const std::runtime_error&) {
  }
  return 0;
}
