// ClientAddress: a forwarded address is believed only as far as the hops
// that forwarded it are trusted proxies; AddressRanges' CIDR matching.
#include "server/http/client_address.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fanyi {
namespace {

constexpr ForwardedHeader kXff = ForwardedHeader::kXForwardedFor;
constexpr ForwardedHeader kFwd = ForwardedHeader::kForwarded;

HttpRequest From(const std::string& peer,
                 std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest request;
  request.peer = peer;
  request.headers = std::move(headers);
  return request;
}

TEST(AddressRangesTest, MatchesIpv4AndIpv6Prefixes) {
  const AddressRanges ranges =
      AddressRanges::Parse("127.0.0.0/8, ::1,10.1.0.0/16,fd00::/8,192.0.2.7");
  for (const char* inside : {"127.0.0.1", "127.255.0.9", "::1", "10.1.200.3",
                             "fd12:3456::1", "192.0.2.7", "::ffff:127.0.0.1"}) {
    EXPECT_TRUE(ranges.Contains(inside)) << inside;
  }
  for (const char* outside : {"128.0.0.1", "10.2.0.1", "::2", "fe80::1",
                              "192.0.2.8", "", "not an address", "10.1"}) {
    EXPECT_FALSE(ranges.Contains(outside)) << outside;
  }
  EXPECT_TRUE(AddressRanges::Parse("0.0.0.0/0").Contains("203.0.113.9"));
  EXPECT_FALSE(AddressRanges::Parse("").Contains("127.0.0.1"));
  for (const char* bad : {"10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x",
                          "example.com", "10.0.0.0/8/8", "1.2.3.4/-1"}) {
    EXPECT_THROW(AddressRanges::Parse(bad), std::invalid_argument) << bad;
  }
}

TEST(ClientAddressTest, BelievesOnlyWhatTrustedProxiesForwarded) {
  const AddressRanges proxies = AddressRanges::Parse("127.0.0.0/8,10.0.0.0/8");
  // Straight from a client: its own address, whatever it claims.
  EXPECT_EQ(ClientAddress(From("203.0.113.5", {{"X-Forwarded-For", "1.1.1.1"}}),
                          proxies, kXff),
            "203.0.113.5");
  // Through the ingress: the address it appended.
  EXPECT_EQ(
      ClientAddress(From("127.0.0.1", {{"X-Forwarded-For", "198.51.100.4"}}),
                    proxies, kXff),
      "198.51.100.4");
  // A client's own X-Forwarded-For is kept to the left of what the proxy
  // appends: the nearest untrusted hop is the client.
  EXPECT_EQ(ClientAddress(From("127.0.0.1",
                               {{"x-forwarded-for", "6.6.6.6, 198.51.100.4"}}),
                          proxies, kXff),
            "198.51.100.4");
  // Two trusted proxies in a row, and the header split over two lines.
  EXPECT_EQ(ClientAddress(From("127.0.0.1",
                               {{"X-Forwarded-For", "6.6.6.6"},
                                {"X-Forwarded-For", "198.51.100.4,10.0.0.3"}}),
                          proxies, kXff),
            "198.51.100.4");
  // Garbage stops the walk at the last trusted hop.
  EXPECT_EQ(ClientAddress(
                From("127.0.0.1", {{"X-Forwarded-For", "198.51.100.4, junk"}}),
                proxies, kXff),
            "127.0.0.1");
  EXPECT_EQ(
      ClientAddress(From("127.0.0.1", {{"X-Forwarded-For", "junk, 10.0.0.3"}}),
                    proxies, kXff),
      "10.0.0.3");
  // No header: the proxy itself.
  EXPECT_EQ(ClientAddress(From("10.0.0.3", {}), proxies, kXff), "10.0.0.3");
  // One address, one client, however it is spelled.
  EXPECT_EQ(
      ClientAddress(From("127.0.0.1", {{"X-Forwarded-For", "2001:DB8:0:0::1"}}),
                    proxies, kXff),
      "2001:db8::1");
}

TEST(ClientAddressTest, ReadsForwardedAsRfc7239WritesIt) {
  const AddressRanges proxies = AddressRanges::Parse("127.0.0.1");
  EXPECT_EQ(
      ClientAddress(
          From("127.0.0.1",
               {{"Forwarded", "for=192.0.2.60;proto=http;by=203.0.113.43"}}),
          proxies, kFwd),
      "192.0.2.60");
  EXPECT_EQ(
      ClientAddress(From("127.0.0.1",
                         {{"Forwarded",
                           "for=6.6.6.6, For=\"[2001:db8:cafe::17]:4711\""}}),
                    proxies, kFwd),
      "2001:db8:cafe::17");
  EXPECT_EQ(ClientAddress(
                From("127.0.0.1", {{"Forwarded", "for=\"192.0.2.43:47011\""}}),
                proxies, kFwd),
            "192.0.2.43");
  EXPECT_EQ(ClientAddress(From("127.0.0.1", {{"Forwarded", "for=unknown"}}),
                          proxies, kFwd),
            "127.0.0.1");
  // Only the header the proxies write is read: the other may be a
  // client's, passed on untouched.
  const HttpRequest both =
      From("127.0.0.1",
           {{"Forwarded", "for=192.0.2.60"}, {"X-Forwarded-For", "192.0.2.9"}});
  EXPECT_EQ(ClientAddress(both, proxies, kFwd), "192.0.2.60");
  EXPECT_EQ(ClientAddress(both, proxies, kXff), "192.0.2.9");
  EXPECT_EQ(ClientAddress(From("127.0.0.1", {{"X-Forwarded-For", ""},
                                             {"Forwarded", "for=192.0.2.60"}}),
                          proxies, kFwd),
            "192.0.2.60");
  // Ports are dropped: one client, whatever port it came from.
  EXPECT_EQ(
      ClientAddress(From("127.0.0.1", {{"X-Forwarded-For", "192.0.2.9:5678"}}),
                    proxies, kXff),
      "192.0.2.9");
  EXPECT_EQ(ClientAddress(
                From("127.0.0.1", {{"X-Forwarded-For", "[2001:db8::5]:443"}}),
                proxies, kXff),
            "2001:db8::5");
}

TEST(ClientAddressTest, ALongChainIsReadSixtyFourHopsDeepAtMost) {
  const AddressRanges proxies = AddressRanges::Parse("10.0.0.0/8");
  std::string chain = "198.51.100.4";
  for (int i = 0; i < 100; ++i) chain += ", 10.0.0.1";
  EXPECT_EQ(ClientAddress(From("10.0.0.2", {{"X-Forwarded-For", chain}}),
                          proxies, kXff),
            "10.0.0.1");
  std::string commas(20000, ',');
  EXPECT_EQ(ClientAddress(From("10.0.0.2", {{"X-Forwarded-For", commas}}),
                          proxies, kXff),
            "10.0.0.2");
}

}  // namespace
}  // namespace fanyi
