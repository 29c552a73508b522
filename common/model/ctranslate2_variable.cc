#include "common/model/ctranslate2_variable.h"

namespace fanyi {

std::string Ct2TypeName(Ct2Type type) {
  switch (type) {
    case Ct2Type::kFloat32:
      return "float32";
    case Ct2Type::kInt8:
      return "int8";
    case Ct2Type::kInt16:
      return "int16";
    case Ct2Type::kInt32:
      return "int32";
    case Ct2Type::kFloat16:
      return "float16";
    case Ct2Type::kBfloat16:
      return "bfloat16";
  }
  return "unknown";
}

int64_t Ct2ItemSize(Ct2Type type) {
  switch (type) {
    case Ct2Type::kInt8:
      return 1;
    case Ct2Type::kInt16:
    case Ct2Type::kFloat16:
    case Ct2Type::kBfloat16:
      return 2;
    case Ct2Type::kFloat32:
    case Ct2Type::kInt32:
      return 4;
  }
  return 0;
}

at::ScalarType Ct2TorchType(Ct2Type type) {
  switch (type) {
    case Ct2Type::kFloat32:
      return at::kFloat;
    case Ct2Type::kInt8:
      return at::kChar;
    case Ct2Type::kInt16:
      return at::kShort;
    case Ct2Type::kInt32:
      return at::kInt;
    case Ct2Type::kFloat16:
      return at::kHalf;
    case Ct2Type::kBfloat16:
      return at::kBFloat16;
  }
  return at::kFloat;
}

bool Ct2IsFloating(Ct2Type type) {
  return type == Ct2Type::kFloat32 || type == Ct2Type::kFloat16 ||
         type == Ct2Type::kBfloat16;
}

}  // namespace fanyi
