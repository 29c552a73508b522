#include "trainer/token_shard.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>

namespace fanyi {
namespace {

constexpr char kMagic[8] = {'F', 'A', 'N', 'Y', 'I', 'S', 'H', 'D'};

// The header after the magic.
struct Header {
  uint32_t format_version = 0;
  uint32_t reserved = 0;
  uint64_t pairs = 0;
  uint64_t ids = 0;
};

// The shard format is little-endian; so is every machine fanyi builds for
// (x86-64, arm64), where the arrays are written and read as they lie.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "token shards are read and written as little-endian arrays");

template <typename T>
void ReadArray(std::ifstream& in, std::vector<T>* values, uint64_t count,
               const std::string& path) {
  values->resize(count);
  in.read(reinterpret_cast<char*>(values->data()),
          static_cast<std::streamsize>(count * sizeof(T)));
  if (!in) {
    throw std::runtime_error("token shard " + path +
                             ": truncated (fewer bytes than its header says)");
  }
}

}  // namespace

TokenShard TokenShard::Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot open token shard " + path + ": " +
                             std::strerror(errno));
  }
  char magic[sizeof(kMagic)];
  Header header;
  in.read(magic, sizeof(magic));
  in.read(reinterpret_cast<char*>(&header), sizeof(header));
  if (!in || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
    throw std::runtime_error("token shard " + path + ": not a token shard");
  }
  if (header.format_version != kFormatVersion) {
    throw std::runtime_error(
        "token shard " + path + ": format version " +
        std::to_string(header.format_version) + ", this build reads " +
        std::to_string(kFormatVersion) + " (prepare the corpus again)");
  }
  // Bounds before allocating: a damaged header must not ask for terabytes.
  in.seekg(0, std::ios::end);
  const uint64_t file_size = static_cast<uint64_t>(in.tellg());
  in.seekg(sizeof(kMagic) + sizeof(Header));
  const uint64_t payload = file_size - sizeof(kMagic) - sizeof(Header);
  if (header.pairs > payload / 8 || header.ids > payload / 4 ||
      header.pairs * 8 + header.ids * 4 != payload) {
    throw std::runtime_error("token shard " + path +
                             ": its size does not match its header");
  }
  TokenShard shard;
  ReadArray(in, &shard.source_lengths_, header.pairs, path);
  ReadArray(in, &shard.target_lengths_, header.pairs, path);
  ReadArray(in, &shard.ids_, header.ids, path);
  shard.offsets_.resize(header.pairs);
  uint64_t offset = 0;
  for (uint64_t i = 0; i < header.pairs; ++i) {
    shard.offsets_[i] = static_cast<int64_t>(offset);
    offset += uint64_t{shard.source_lengths_[i]} + shard.target_lengths_[i];
  }
  if (offset != header.ids) {
    throw std::runtime_error("token shard " + path +
                             ": its lengths do not add up to its ids");
  }
  return shard;
}

IdSpan TokenShard::source(int64_t pair) const {
  return {ids_.data() + offsets_[pair], source_lengths_[pair]};
}

IdSpan TokenShard::target(int64_t pair) const {
  return {ids_.data() + offsets_[pair] + source_lengths_[pair],
          target_lengths_[pair]};
}

void TokenShardWriter::Add(const std::vector<int64_t>& source,
                           const std::vector<int64_t>& target) {
  shard_.offsets_.push_back(static_cast<int64_t>(shard_.ids_.size()));
  shard_.source_lengths_.push_back(static_cast<uint32_t>(source.size()));
  shard_.target_lengths_.push_back(static_cast<uint32_t>(target.size()));
  for (const std::vector<int64_t>* side : {&source, &target}) {
    for (int64_t id : *side) {
      if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
        throw std::invalid_argument("token id " + std::to_string(id) +
                                    " does not fit a token shard");
      }
      shard_.ids_.push_back(static_cast<int32_t>(id));
    }
  }
}

void TokenShardWriter::WriteTo(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  Header header;
  header.format_version = TokenShard::kFormatVersion;
  header.pairs = static_cast<uint64_t>(shard_.size());
  header.ids = shard_.ids_.size();
  out.write(kMagic, sizeof(kMagic));
  out.write(reinterpret_cast<const char*>(&header), sizeof(header));
  auto write = [&](const auto& values) {
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(values[0])));
  };
  write(shard_.source_lengths_);
  write(shard_.target_lengths_);
  write(shard_.ids_);
  out.close();
  if (!out) {
    throw std::runtime_error("cannot write token shard " + path + ": " +
                             std::strerror(errno));
  }
  shard_ = TokenShard();
}

}  // namespace fanyi
