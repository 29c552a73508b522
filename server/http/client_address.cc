#include "server/http/client_address.h"

#include <boost/asio/ip/address.hpp>
#include <stdexcept>

#include "common/text/utf8.h"

namespace fanyi {
namespace {

// The most hops of a forwarded chain looked at.
constexpr int kMaxHops = 64;

std::optional<std::array<uint8_t, 16>> AddressBytes(const std::string& text) {
  boost::system::error_code error;
  const boost::asio::ip::address address =
      boost::asio::ip::make_address(text, error);
  if (error) return std::nullopt;
  if (address.is_v4()) {
    return boost::asio::ip::make_address_v6(boost::asio::ip::v4_mapped,
                                            address.to_v4())
        .to_bytes();
  }
  return address.to_v6().to_bytes();
}

// `text` in the address's own spelling ("::1" for "0:0::1"), so that one
// address makes one client; nullopt when it is not an address.
std::optional<std::string> Canonical(const std::string& text) {
  boost::system::error_code error;
  const boost::asio::ip::address address =
      boost::asio::ip::make_address(text, error);
  if (error) return std::nullopt;
  return address.to_string();
}

std::string Trimmed(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// The comma-separated entries of every header `name`, in order.
std::vector<std::string> HeaderList(const HttpRequest& request,
                                    const std::string& name) {
  std::vector<std::string> entries;
  for (const auto& [header, value] : request.headers) {
    if (AsciiLowercase(header) != name) continue;
    std::size_t start = 0;
    while (start <= value.size()) {
      std::size_t comma = value.find(',', start);
      if (comma == std::string::npos) comma = value.size();
      entries.push_back(Trimmed(value.substr(start, comma - start)));
      start = comma + 1;
    }
  }
  return entries;
}

// `entry` without a port: "[v6]:port" and "v4:port" as their addresses.
std::string WithoutPort(const std::string& entry) {
  if (!entry.empty() && entry.front() == '[') {
    const std::size_t close = entry.find(']');
    return close == std::string::npos ? "" : entry.substr(1, close - 1);
  }
  const std::size_t colon = entry.find(':');
  // One colon: IPv4 and a port. More: an IPv6 address without brackets.
  if (colon != std::string::npos &&
      entry.find(':', colon + 1) == std::string::npos) {
    return entry.substr(0, colon);
  }
  return entry;
}

// The address of a Forwarded element's for= (RFC 7239): quotes, IPv6
// brackets and ports taken off; empty when it has none.
std::string ForwardedFor(const std::string& element) {
  std::size_t start = 0;
  while (start < element.size()) {
    std::size_t semicolon = element.find(';', start);
    if (semicolon == std::string::npos) semicolon = element.size();
    const std::string pair = Trimmed(element.substr(start, semicolon - start));
    start = semicolon + 1;
    if (AsciiLowercase(pair.substr(0, 4)) != "for=") continue;
    std::string value = pair.substr(4);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    return WithoutPort(value);
  }
  return "";
}

}  // namespace

AddressRanges AddressRanges::Parse(const std::string& spec) {
  AddressRanges ranges;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t comma = spec.find(',', start);
    if (comma == std::string::npos) comma = spec.size();
    const std::string range = Trimmed(spec.substr(start, comma - start));
    start = comma + 1;
    if (range.empty()) continue;
    const std::size_t slash = range.find('/');
    const std::string address = range.substr(0, slash);
    const std::optional<std::array<uint8_t, 16>> bytes = AddressBytes(address);
    const bool v4 = address.find(':') == std::string::npos;
    int bits = v4 ? 32 : 128;
    if (slash != std::string::npos) {
      const std::string length = range.substr(slash + 1);
      bits = -1;
      if (!length.empty() && length.size() <= 3 &&
          length.find_first_not_of("0123456789") == std::string::npos) {
        bits = std::stoi(length);
      }
    }
    if (!bytes || bits < 0 || bits > (v4 ? 32 : 128)) {
      throw std::invalid_argument("not an IP address range: \"" + range +
                                  "\" (e.g. 10.0.0.0/8 or fd00::/8)");
    }
    ranges.ranges_.push_back({*bytes, v4 ? bits + 96 : bits});
  }
  return ranges;
}

bool AddressRanges::Contains(const std::string& address) const {
  const std::optional<std::array<uint8_t, 16>> bytes = AddressBytes(address);
  if (!bytes) return false;
  for (const Range& range : ranges_) {
    int bits = range.prefix_bits;
    bool inside = true;
    for (int i = 0; i < 16 && bits > 0 && inside; ++i, bits -= 8) {
      const int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
      inside = ((*bytes)[i] & mask) == (range.bytes[i] & mask);
    }
    if (inside) return true;
  }
  return false;
}

std::string ClientAddress(const HttpRequest& request,
                          const AddressRanges& trusted,
                          ForwardedHeader header) {
  if (!trusted.Contains(request.peer)) return request.peer;
  std::vector<std::string> chain;
  if (header == ForwardedHeader::kXForwardedFor) {
    for (const std::string& entry : HeaderList(request, "x-forwarded-for")) {
      chain.push_back(WithoutPort(entry));
    }
  } else {
    for (const std::string& element : HeaderList(request, "forwarded")) {
      chain.push_back(ForwardedFor(element));
    }
  }
  std::string client = request.peer;
  int hops = 0;
  for (auto hop = chain.rbegin(); hop != chain.rend() && hops < kMaxHops;
       ++hop, ++hops) {
    const std::optional<std::string> address = Canonical(*hop);
    if (!address) break;  // Nothing past it can be trusted.
    client = *address;
    if (!trusted.Contains(client)) break;
  }
  return client;
}

}  // namespace fanyi
