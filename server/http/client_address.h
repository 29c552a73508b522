// The address a request comes from when proxies stand in front of the
// server (an ingress, a load balancer): taken from X-Forwarded-For or
// Forwarded, but only as far as the hops that set them are trusted
// proxies, so a client cannot choose whom its requests count against.
#ifndef FANYI_SERVER_HTTP_CLIENT_ADDRESS_H_
#define FANYI_SERVER_HTTP_CLIENT_ADDRESS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "server/http/http_server.h"

namespace fanyi {

// IP address ranges (CIDR), IPv4 and IPv6.
class AddressRanges {
 public:
  // `spec`: ranges separated by commas ("127.0.0.0/8,::1,10.0.0.0/8"); an
  // address without a length is that address alone. Throws
  // std::invalid_argument naming a range that does not parse.
  static AddressRanges Parse(const std::string& spec);

  // Whether `address` (an IP address as text) is in one of the ranges;
  // false for text that is not an address.
  bool Contains(const std::string& address) const;

 private:
  struct Range {
    std::array<uint8_t, 16> bytes;  // IPv4 as IPv4-mapped IPv6.
    int prefix_bits;
  };
  std::vector<Range> ranges_;
};

// The header trusted proxies write the client's address into.
enum class ForwardedHeader {
  kXForwardedFor,  // X-Forwarded-For: 203.0.113.7, 10.0.0.3
  kForwarded,      // RFC 7239's Forwarded: for=203.0.113.7, for=10.0.0.3
};

// The client's address for `request` (whose peer is the connection's
// address): the peer itself unless it is in `trusted`; then the nearest
// address in the chain of `header` (the other is never read: a client
// could have sent it, passed on untouched) that is not a trusted proxy,
// read from the right (the hop nearest the server), at most 64 hops; an
// entry's port is dropped. Where the chain is missing or an entry is not an
// address, the last trusted hop before it stands for the client.
std::string ClientAddress(const HttpRequest& request,
                          const AddressRanges& trusted, ForwardedHeader header);

}  // namespace fanyi

#endif  // FANYI_SERVER_HTTP_CLIENT_ADDRESS_H_
