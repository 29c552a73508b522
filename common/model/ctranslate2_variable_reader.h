#ifndef FANYI_COMMON_MODEL_CTRANSLATE2_VARIABLE_READER_H_
#define FANYI_COMMON_MODEL_CTRANSLATE2_VARIABLE_READER_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/model/ctranslate2_file.h"

namespace fanyi {

// Reads a model.bin's variables by name, marks each one read, and says what
// is left: a variable nobody read is an option fanyi does not serve.
class Ct2VariableReader {
 public:
  explicit Ct2VariableReader(const Ct2ModelFile& model) : model_(model) {}

  // Throws std::runtime_error naming the model file and `what`.
  [[noreturn]] void Fail(const std::string& what) const;

  // Whether the model has a variable `name`.
  bool Has(const std::string& name) const { return model_.Has(name); }

  // The variable, marked read with its scale; throws when missing.
  const Ct2Variable& Take(const std::string& name);

  // A variable of exactly `shape`.
  const Ct2Variable& Shaped(const std::string& name,
                            const std::vector<int64_t>& shape);

  // A linear layer: its weight [rows, columns] and its bias [rows], if any.
  void Linear(const std::string& name, int64_t rows, int64_t columns);

  // A layer norm: gamma and beta (an RMS norm has no beta).
  void LayerNorm(const std::string& name, int64_t size);

  // A scalar integer flag, `fallback` when absent.
  int64_t Flag(const std::string& name, int64_t fallback);

  // A flag that must have one value (an option fanyi does not serve
  // otherwise).
  void Expect(const std::string& name, int64_t value,
              const std::string& option);

  // Fails for the first variable no one read.
  void FailOnUnread() const;

 private:
  static std::string ShapeText(const std::vector<int64_t>& shape);

  const Ct2ModelFile& model_;
  std::set<const Ct2Variable*> read_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_MODEL_CTRANSLATE2_VARIABLE_READER_H_
