#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_FILE_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_FILE_H_

#include <torch/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/model/ctranslate2_variable.h"

namespace fanyi {

// A CTranslate2 model.bin: binary versions 1 to 6, as CTranslate2's Python
// specs write them. The file is mapped read-only and checked as a whole when
// opened: every count and size against the bytes left (at most 1,048,576
// variables and as many aliases), every variable's payload against its
// shape, names and aliases once each, nothing after the last alias. A
// variable's items are read only when asked for, so the file must not
// shrink while it is open (a read past its new end would fault; replace a
// model by renaming a new file into place). Errors name the file, what is
// wrong and where.
class Ct2ModelFile {
 public:
  // The newest binary version this reader knows (CTranslate2 4.x writes it).
  static constexpr int64_t kNewestBinaryVersion = 6;

  // Maps and checks `path`. Throws std::runtime_error.
  static Ct2ModelFile Open(const std::string& path);
  // Checks `bytes`, which the result keeps; `name` stands for the file in
  // errors.
  static Ct2ModelFile FromBytes(std::string bytes, const std::string& name);

  const std::string& name() const { return name_; }
  int64_t binary_version() const { return binary_version_; }
  // The spec's class name ("TransformerSpec"), empty before version 2.
  const std::string& spec() const { return spec_; }
  int64_t spec_revision() const { return spec_revision_; }

  // Whether `name` is a variable or an alias of one. As CTranslate2 does,
  // an alias also stands for its variable's "_scale" and "_zero".
  bool Has(const std::string& name) const;
  // The variable `name` names; throws std::runtime_error when there is none.
  const Ct2Variable& Get(const std::string& name) const;
  // Every variable's own name, sorted.
  std::vector<std::string> VariableNames() const;

  // The variable as a float32 tensor of its shape (a copy). float16 and
  // bfloat16 are widened; int8 and int16 weights are divided by their
  // "<name>_scale" (one scale per row of the first dimension, or one for
  // all), as CTranslate2 quantized them. Throws std::runtime_error for
  // integers without a scale.
  torch::Tensor Float(const std::string& name) const;
  // A scalar integer variable (a flag, a head count, an enum); nullopt when
  // there is none. Throws std::runtime_error for another shape or type.
  std::optional<int64_t> Integer(const std::string& name) const;
  // A string variable (int8 items, as CTranslate2 stores strings); nullopt
  // when there is none.
  std::optional<std::string> Text(const std::string& name) const;

 private:
  Ct2ModelFile() = default;
  static Ct2ModelFile Parse(std::shared_ptr<const char> storage, int64_t size,
                            const std::string& name);
  const Ct2Variable* Find(const std::string& name) const;
  [[noreturn]] void Fail(const std::string& what) const;

  std::shared_ptr<const char> storage_;  // The mapping or the bytes.
  std::string name_;
  int64_t binary_version_ = 0;
  std::string spec_;
  int64_t spec_revision_ = 1;
  std::map<std::string, Ct2Variable> variables_;
  std::map<std::string, std::string> aliases_;  // Alias -> variable.
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_FILE_H_
