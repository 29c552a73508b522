#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_VARIABLE_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_VARIABLE_H_

#include <torch/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fanyi {

// Element types of a CTranslate2 variable, numbered as model.bin numbers
// them.
enum class Ct2Type : uint8_t {
  kFloat32 = 0,
  kInt8 = 1,
  kInt16 = 2,
  kInt32 = 3,
  kFloat16 = 4,
  kBfloat16 = 5,
};

// "float32", "int8", ...
std::string Ct2TypeName(Ct2Type type);

// The bytes of one item of `type`.
int64_t Ct2ItemSize(Ct2Type type);

// The torch element type that holds items of `type` as they are.
at::ScalarType Ct2TorchType(Ct2Type type);

// Whether `type` is float32, float16 or bfloat16.
bool Ct2IsFloating(Ct2Type type);

// One variable of a model.bin: its shape, element type and little-endian
// items, which stay in the file's mapping (valid while the Ct2ModelFile, or
// a copy of it, lives).
struct Ct2Variable {
  std::vector<int64_t> shape;  // Empty for a scalar.
  Ct2Type type = Ct2Type::kFloat32;
  const char* data = nullptr;
  int64_t bytes = 0;
  int64_t elements = 0;  // The product of the shape.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_VARIABLE_H_
