#include "common/text/wire_reader.h"

#include <cstring>
#include <stdexcept>

namespace fanyi {

std::pair<uint64_t, int> WireReader::Tag() {
  const uint64_t tag = Varint();
  return {tag >> 3, static_cast<int>(tag & 7)};
}

uint64_t WireReader::Varint() {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (rest_.empty()) Fail("a number runs past the end");
    const auto byte = static_cast<uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  Fail("a number is longer than 10 bytes");
}

std::string_view WireReader::Bytes() {
  const uint64_t length = Varint();
  if (length > rest_.size()) Fail("a field runs past the end");
  const std::string_view bytes = rest_.substr(0, length);
  rest_.remove_prefix(length);
  return bytes;
}

float WireReader::Float() {
  if (rest_.size() < 4) Fail("a float runs past the end");
  float value;
  std::memcpy(&value, rest_.data(), 4);  // Little-endian, as x86-64.
  rest_.remove_prefix(4);
  return value;
}

void WireReader::Skip(int wire_type) {
  switch (wire_type) {
    case 0:
      Varint();
      return;
    case 1:
      if (rest_.size() < 8) Fail("a field runs past the end");
      rest_.remove_prefix(8);
      return;
    case 2:
      Bytes();
      return;
    case 5:
      Float();
      return;
  }
  Fail("unknown wire type " + std::to_string(wire_type));
}

void WireReader::Fail(const std::string& what) {
  throw std::invalid_argument("not a SentencePiece model: " + what);
}

}  // namespace fanyi
