#include "common/model/ctranslate2_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

namespace fanyi {
namespace {

// No CTranslate2 spec has a variable of more dimensions than 3 (a
// convolution's weight); a larger rank is a broken file.
constexpr int64_t kMaxRank = 8;
// The largest specs have some thousands of variables; each parsed one costs
// a few hundred bytes, so a file of millions of tiny ones is refused.
constexpr int64_t kMaxVariables = int64_t{1} << 20;

// Reads model.bin's fields in order, each checked against the bytes left.
class Cursor {
 public:
  Cursor(const char* data, int64_t size, const std::string& file)
      : data_(data), size_(size), file_(file) {}

  int64_t offset() const { return offset_; }
  int64_t left() const { return size_ - offset_; }

  [[noreturn]] void Fail(const std::string& what) const {
    throw std::runtime_error(file_ + ": " + what + " (at byte " +
                             std::to_string(offset_) + ")");
  }

  const char* Take(int64_t bytes, const std::string& what) {
    if (bytes < 0 || bytes > left()) {
      Fail("the file ends inside " + what + " (" + std::to_string(bytes) +
           " bytes wanted, " + std::to_string(left()) + " left)");
    }
    const char* taken = data_ + offset_;
    offset_ += bytes;
    return taken;
  }

  template <typename T>
  T Read(const std::string& what) {
    T value;
    std::memcpy(&value, Take(sizeof(T), what), sizeof(T));
    return value;
  }

  // A string as CTranslate2 writes one: a 16-bit length that counts a
  // closing NUL, the bytes, the NUL.
  std::string String(const std::string& what) {
    const auto length = Read<uint16_t>(what + "'s length");
    if (length == 0) Fail(what + " has length 0 (no closing NUL)");
    const char* text = Take(length, what);
    if (text[length - 1] != '\0') Fail(what + " does not end with a NUL");
    if (std::memchr(text, '\0', length - 1) != nullptr) {
      Fail(what + " has a NUL inside");
    }
    return std::string(text, length - 1);
  }

 private:
  const char* data_;
  int64_t size_;
  const std::string& file_;
  int64_t offset_ = 0;
};

// The type CTranslate2 gave variables of a binary version before 4, which
// stored an item size instead of a type.
Ct2Type TypeOfItemSize(int64_t item_size, Cursor& cursor,
                       const std::string& name) {
  switch (item_size) {
    case 4:
      return Ct2Type::kFloat32;
    case 2:
      return Ct2Type::kInt16;
    case 1:
      return Ct2Type::kInt8;
  }
  cursor.Fail("variable \"" + name + "\" has items of " +
              std::to_string(item_size) + " bytes (1, 2 or 4 expected)");
}

}  // namespace

Ct2ModelFile Ct2ModelFile::Open(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer (fstat refuses
  // it next).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    throw std::runtime_error(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat status {};
  if (::fstat(fd, &status) != 0 || !S_ISREG(status.st_mode)) {
    ::close(fd);
    throw std::runtime_error(path + ": not a regular file");
  }
  const auto size = static_cast<int64_t>(status.st_size);
  if (size == 0) {
    ::close(fd);
    throw std::runtime_error(path + ": the file is empty");
  }
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_error = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) {
    throw std::runtime_error(path +
                             ": cannot map: " + std::strerror(map_error));
  }
  std::shared_ptr<const char> storage(
      static_cast<const char*>(mapping),
      [size](const char* data) { ::munmap(const_cast<char*>(data), size); });
  return Parse(std::move(storage), size, path);
}

Ct2ModelFile Ct2ModelFile::FromBytes(std::string bytes,
                                     const std::string& name) {
  auto owned = std::make_shared<std::string>(std::move(bytes));
  const auto size = static_cast<int64_t>(owned->size());
  std::shared_ptr<const char> storage(owned, owned->data());
  return Parse(std::move(storage), size, name);
}

Ct2ModelFile Ct2ModelFile::Parse(std::shared_ptr<const char> storage,
                                 int64_t size, const std::string& name) {
  Ct2ModelFile file;
  file.storage_ = std::move(storage);
  file.name_ = name;
  Cursor cursor(file.storage_.get(), size, file.name_);
  file.binary_version_ = cursor.Read<uint32_t>("the binary version");
  if (file.binary_version_ < 1 || file.binary_version_ > kNewestBinaryVersion) {
    cursor.Fail("binary version " + std::to_string(file.binary_version_) +
                " is not one this reader knows (1 to " +
                std::to_string(kNewestBinaryVersion) + ")");
  }
  if (file.binary_version_ >= 2) {
    file.spec_ = cursor.String("the spec's name");
    file.spec_revision_ = cursor.Read<uint32_t>("the spec's revision");
  }
  // The smallest record: a one-byte name (2 + 1), a rank (1), a type or
  // item size (1) and a size (4).
  constexpr int64_t kSmallestVariable = 9;
  const auto variables = cursor.Read<uint32_t>("the number of variables");
  if (variables > kMaxVariables) {
    cursor.Fail(std::to_string(variables) + " variables (at most " +
                std::to_string(kMaxVariables) + ")");
  }
  if (variables > cursor.left() / kSmallestVariable) {
    cursor.Fail(std::to_string(variables) + " variables cannot fit in the " +
                std::to_string(cursor.left()) + " bytes left");
  }
  for (uint32_t i = 0; i < variables; ++i) {
    std::string variable_name =
        cursor.String("the name of variable " + std::to_string(i));
    const std::string quoted = "variable \"" + variable_name + "\"";
    Ct2Variable variable;
    const auto rank = cursor.Read<uint8_t>(quoted + "'s rank");
    if (rank > kMaxRank) {
      cursor.Fail(quoted + " has " + std::to_string(rank) +
                  " dimensions (at most " + std::to_string(kMaxRank) + ")");
    }
    // The product of the nonzero dimensions stays within the bytes left,
    // even where another dimension is 0 (no items): a larger shape is
    // broken, found before a product can overflow, and no tensor of it is
    // ever allocated.
    int64_t nonzero = 1;
    bool empty = false;
    for (uint8_t d = 0; d < rank; ++d) {
      const auto dimension = cursor.Read<uint32_t>(quoted + "'s shape");
      variable.shape.push_back(dimension);
      if (dimension == 0) {
        empty = true;
      } else if (nonzero > cursor.left() / dimension) {
        cursor.Fail(quoted + "'s shape holds more elements than the file");
      } else {
        nonzero *= dimension;
      }
    }
    const int64_t elements = empty ? 0 : nonzero;
    int64_t bytes = 0;
    if (file.binary_version_ >= 4) {
      const auto type = cursor.Read<uint8_t>(quoted + "'s type");
      if (type > static_cast<uint8_t>(Ct2Type::kBfloat16)) {
        cursor.Fail(quoted + " has type " + std::to_string(type) +
                    ", not one of float32, int8, int16, int32, float16, "
                    "bfloat16 (0 to 5)");
      }
      variable.type = static_cast<Ct2Type>(type);
      bytes = cursor.Read<uint32_t>(quoted + "'s size");
    } else {
      const auto item_size = cursor.Read<uint8_t>(quoted + "'s item size");
      variable.type = TypeOfItemSize(item_size, cursor, variable_name);
      bytes =
          int64_t{cursor.Read<uint32_t>(quoted + "'s item count")} * item_size;
    }
    if (elements * Ct2ItemSize(variable.type) != bytes) {
      cursor.Fail(quoted + " has " + std::to_string(bytes) +
                  " bytes for its shape of " + std::to_string(elements) + " " +
                  Ct2TypeName(variable.type) + " items");
    }
    variable.data = cursor.Take(bytes, quoted + "'s items");
    variable.bytes = bytes;
    variable.elements = elements;
    if (!file.variables_.emplace(variable_name, std::move(variable)).second) {
      cursor.Fail(quoted + " comes twice");
    }
  }
  if (file.binary_version_ >= 3) {
    const auto aliases = cursor.Read<uint32_t>("the number of aliases");
    // The smallest alias: two one-byte names.
    if (aliases > kMaxVariables || aliases > cursor.left() / 6) {
      cursor.Fail(std::to_string(aliases) + " aliases cannot fit in the " +
                  std::to_string(cursor.left()) + " bytes left");
    }
    for (uint32_t i = 0; i < aliases; ++i) {
      std::string alias = cursor.String("alias " + std::to_string(i));
      std::string target =
          cursor.String("the variable of alias \"" + alias + "\"");
      if (file.variables_.count(alias) != 0 ||
          file.aliases_.count(alias) != 0) {
        cursor.Fail("alias \"" + alias + "\" names a variable already");
      }
      // As CTranslate2 does, an alias of an earlier alias stands for its
      // variable, and an alias of nothing stands for nothing.
      if (auto earlier = file.aliases_.find(target);
          earlier != file.aliases_.end()) {
        target = earlier->second;
      }
      if (file.variables_.count(target) != 0) {
        file.aliases_.emplace(std::move(alias), std::move(target));
      }
    }
  }
  if (cursor.left() != 0) {
    cursor.Fail(std::to_string(cursor.left()) + " bytes follow the last field");
  }
  return file;
}

const Ct2Variable* Ct2ModelFile::Find(const std::string& name) const {
  if (auto found = variables_.find(name); found != variables_.end()) {
    return &found->second;
  }
  if (auto alias = aliases_.find(name); alias != aliases_.end()) {
    return &variables_.at(alias->second);
  }
  // An alias's quantization scale (or zero point) is its variable's.
  for (const std::string suffix : {"_scale", "_zero"}) {
    if (name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    auto alias = aliases_.find(name.substr(0, name.size() - suffix.size()));
    if (alias == aliases_.end()) continue;
    auto found = variables_.find(alias->second + suffix);
    if (found != variables_.end()) return &found->second;
  }
  return nullptr;
}

void Ct2ModelFile::Fail(const std::string& what) const {
  throw std::runtime_error(name_ + ": " + what);
}

bool Ct2ModelFile::Has(const std::string& name) const {
  return Find(name) != nullptr;
}

const Ct2Variable& Ct2ModelFile::Get(const std::string& name) const {
  const Ct2Variable* variable = Find(name);
  if (variable == nullptr) Fail("has no variable \"" + name + "\"");
  return *variable;
}

std::vector<std::string> Ct2ModelFile::VariableNames() const {
  std::vector<std::string> names;
  for (const auto& [name, variable] : variables_) names.push_back(name);
  return names;
}

torch::Tensor Ct2ModelFile::Float(const std::string& name) const {
  const Ct2Variable& variable = Get(name);
  // A copy: the items in the file need not be aligned for their type.
  torch::Tensor items =
      torch::empty(variable.shape, torch::dtype(Ct2TorchType(variable.type)));
  if (variable.bytes > 0) {
    std::memcpy(items.data_ptr(), variable.data, variable.bytes);
  }
  if (Ct2IsFloating(variable.type)) return items.to(at::kFloat);
  if (variable.type == Ct2Type::kInt32) {
    Fail("variable \"" + name + "\" holds int32 items, not weights");
  }
  const std::string scale_name = name + "_scale";
  const Ct2Variable* scale_variable = Find(scale_name);
  if (scale_variable == nullptr || !Ct2IsFloating(scale_variable->type)) {
    Fail("variable \"" + name + "\" holds " + Ct2TypeName(variable.type) +
         " items without a floating-point \"" + scale_name + "\"");
  }
  torch::Tensor scale = Float(scale_name);
  if (scale.numel() == 1) return items.to(at::kFloat) / scale.reshape({});
  if (variable.shape.empty() || scale.dim() != 1 ||
      scale.size(0) != variable.shape[0]) {
    Fail("variable \"" + scale_name + "\" has " +
         std::to_string(scale.numel()) + " scales for \"" + name +
         "\"'s rows (one, or one per row expected)");
  }
  std::vector<int64_t> per_row(variable.shape.size(), 1);
  per_row[0] = variable.shape[0];
  return items.to(at::kFloat) / scale.view(per_row);
}

std::optional<int64_t> Ct2ModelFile::Integer(const std::string& name) const {
  const Ct2Variable* variable = Find(name);
  if (variable == nullptr) return std::nullopt;
  if (variable->elements != 1 || Ct2IsFloating(variable->type)) {
    Fail("variable \"" + name + "\" is not one integer (" +
         std::to_string(variable->elements) + " " +
         Ct2TypeName(variable->type) + " items)");
  }
  switch (variable->type) {
    case Ct2Type::kInt8:
      return static_cast<int8_t>(variable->data[0]);
    case Ct2Type::kInt16: {
      int16_t value;
      std::memcpy(&value, variable->data, sizeof(value));
      return value;
    }
    default: {
      int32_t value;
      std::memcpy(&value, variable->data, sizeof(value));
      return value;
    }
  }
}

std::optional<std::string> Ct2ModelFile::Text(const std::string& name) const {
  const Ct2Variable* variable = Find(name);
  if (variable == nullptr) return std::nullopt;
  if (variable->type != Ct2Type::kInt8 || variable->shape.size() != 1) {
    Fail("variable \"" + name + "\" is not a string (" +
         std::to_string(variable->shape.size()) + " dimensions of " +
         Ct2TypeName(variable->type) + " items)");
  }
  return std::string(variable->data, variable->bytes);
}

}  // namespace fanyi
