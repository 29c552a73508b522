// RequestRateLimiter: N requests per minute per client, refilled over the
// minute, on a clock the test moves.
#include "server/http/request_rate_limiter.h"

#include <gtest/gtest.h>

#include <chrono>

namespace fanyi {
namespace {

using std::chrono::seconds;

class RequestRateLimiterTest : public ::testing::Test {
 protected:
  RequestRateLimiter Limiter(int per_minute) {
    return RequestRateLimiter(per_minute, [this] { return now_; });
  }
  std::chrono::steady_clock::time_point now_{};
};

TEST_F(RequestRateLimiterTest, AdmitsNAMinutePerClient) {
  RequestRateLimiter limiter = Limiter(3);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit("a")) << i;
  EXPECT_FALSE(limiter.Admit("a"));
  EXPECT_TRUE(limiter.Admit("b"));  // Another client has its own.
  now_ += seconds(20);              // A third of a minute: one more.
  EXPECT_TRUE(limiter.Admit("a"));
  EXPECT_FALSE(limiter.Admit("a"));
  now_ += seconds(600);  // Long idle: full again, never more.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit("a")) << i;
  EXPECT_FALSE(limiter.Admit("a"));
}

TEST_F(RequestRateLimiterTest, RefusedRequestsDoNotCount) {
  RequestRateLimiter limiter = Limiter(60);
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(limiter.Admit("a"));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.Admit("a"));
  now_ += seconds(1);
  EXPECT_TRUE(limiter.Admit("a"));
}

TEST_F(RequestRateLimiterTest, ZeroIsNoLimit) {
  RequestRateLimiter limiter = Limiter(0);
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(limiter.Admit("a"));
}

}  // namespace
}  // namespace fanyi
