// Protocol buffers' wire format, read by hand for SentencePiece's model
// files: common/ links neither protobuf nor SentencePiece (SubwordModel says
// why).
#ifndef FANYI_COMMON_TEXT_WIRE_READER_H_
#define FANYI_COMMON_TEXT_WIRE_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace fanyi {

// Protocol buffers' wire format, enough to read a model file: fields are
// (tag varint: number << 3 | wire type) followed by a varint (type 0), 8
// bytes (1), a length-prefixed run (2) or 4 bytes (5).
class WireReader {
 public:
  explicit WireReader(std::string_view bytes) : rest_(bytes) {}

  // Whether every field has been read.
  bool done() const { return rest_.empty(); }

  // The next field's number and wire type.
  std::pair<uint64_t, int> Tag();

  // A varint field's value (wire type 0).
  uint64_t Varint();

  // A length-prefixed field's bytes (wire type 2).
  std::string_view Bytes();

  // A 4-byte float field's value (wire type 5).
  float Float();

  // Passes over a field of `wire_type`.
  void Skip(int wire_type);

  // Throws std::invalid_argument: the bytes are not a SentencePiece model,
  // for the reason `what`.
  [[noreturn]] static void Fail(const std::string& what);

 private:
  std::string_view rest_;
};

}  // namespace fanyi

#endif  // FANYI_COMMON_TEXT_WIRE_READER_H_
