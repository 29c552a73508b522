// RequestRateLimiter: N a period per client, refilled over the period, on
// a clock the test moves.
#include "server/http/request_rate_limiter.h"

#include <gtest/gtest.h>

#include <chrono>

namespace fanyi {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

class RequestRateLimiterTest : public ::testing::Test {
 protected:
  RequestRateLimiter Limiter(std::chrono::seconds period) {
    return RequestRateLimiter(period, [this] { return now_; });
  }
  std::chrono::steady_clock::time_point now_{};
};

TEST_F(RequestRateLimiterTest, AdmitsNAMinutePerClient) {
  RequestRateLimiter limiter = Limiter(minutes(1));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit("a", 3)) << i;
  EXPECT_FALSE(limiter.Admit("a", 3));
  EXPECT_TRUE(limiter.Admit("b", 3));  // Another client has its own.
  now_ += seconds(20);                 // A third of a minute: one more.
  EXPECT_TRUE(limiter.Admit("a", 3));
  EXPECT_FALSE(limiter.Admit("a", 3));
  now_ += seconds(600);  // Long idle: full again, never more.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.Admit("a", 3)) << i;
  EXPECT_FALSE(limiter.Admit("a", 3));
}

TEST_F(RequestRateLimiterTest, RefusedRequestsDoNotCount) {
  RequestRateLimiter limiter = Limiter(minutes(1));
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(limiter.Admit("a", 60));
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(limiter.Admit("a", 60));
  now_ += seconds(1);
  EXPECT_TRUE(limiter.Admit("a", 60));
}

TEST_F(RequestRateLimiterTest, ZeroIsNoLimit) {
  RequestRateLimiter limiter = Limiter(minutes(1));
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(limiter.Admit("a", 0));
}

TEST_F(RequestRateLimiterTest, CharactersADayAreSpentByCost) {
  RequestRateLimiter limiter = Limiter(hours(24));
  EXPECT_TRUE(limiter.Admit("key", 1000, 600));
  EXPECT_FALSE(limiter.Admit("key", 1000, 500));  // 400 left.
  EXPECT_TRUE(limiter.Admit("key", 1000, 400));
  EXPECT_FALSE(limiter.Admit("key", 1000, 1));
  now_ += hours(6);  // A quarter of the day: 250 more.
  EXPECT_FALSE(limiter.Admit("key", 1000, 251));
  EXPECT_TRUE(limiter.Admit("key", 1000, 250));
  // More than a whole day's: never.
  now_ += hours(48);
  EXPECT_FALSE(limiter.Admit("key", 1000, 1001));
  EXPECT_TRUE(limiter.Admit("key", 1000, 1000));
}

TEST_F(RequestRateLimiterTest, AChangedLimitHoldsAtOnce) {
  RequestRateLimiter limiter = Limiter(minutes(1));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(limiter.Admit("key", 10));
  // Lowered to 2 with 5 spent: nothing until 4 have drained at 2 a minute.
  EXPECT_FALSE(limiter.Admit("key", 2));
  now_ += seconds(90);  // 3 drained: 2 spent.
  EXPECT_FALSE(limiter.Admit("key", 2));
  now_ += seconds(30);  // 1 spent.
  EXPECT_TRUE(limiter.Admit("key", 2));
  EXPECT_FALSE(limiter.Admit("key", 2));
  // Raised to 100 with 2 spent: the other 98 at once.
  for (int i = 0; i < 98; ++i) EXPECT_TRUE(limiter.Admit("key", 100)) << i;
  EXPECT_FALSE(limiter.Admit("key", 100));
}

TEST_F(RequestRateLimiterTest, RefilledClientsAreForgottenAndStartFull) {
  RequestRateLimiter limiter = Limiter(minutes(1));
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(limiter.Admit("a", 2));
  EXPECT_FALSE(limiter.Admit("a", 2));
  now_ += minutes(2);  // The sweep forgets "a"; it comes back full.
  ASSERT_TRUE(limiter.Admit("b", 2));
  EXPECT_TRUE(limiter.Admit("a", 2));
  EXPECT_TRUE(limiter.Admit("a", 2));
  EXPECT_FALSE(limiter.Admit("a", 2));
}

TEST_F(RequestRateLimiterTest, WouldRefuseSaysWithoutCounting) {
  // Violations forgiven one each 10 minutes, banned at 3.
  RequestRateLimiter violations = Limiter(minutes(30));
  for (int i = 0; i < 100; ++i) ASSERT_FALSE(violations.WouldRefuse("a", 3));
  for (int i = 0; i < 3; ++i) violations.Admit("a", 3);
  EXPECT_TRUE(violations.WouldRefuse("a", 3));
  EXPECT_FALSE(violations.WouldRefuse("b", 3));
  EXPECT_FALSE(violations.WouldRefuse("a", 0));  // 0: never.
  now_ += minutes(9);
  EXPECT_TRUE(violations.WouldRefuse("a", 3));
  now_ += minutes(1);  // One forgiven: one more violation bans again.
  EXPECT_FALSE(violations.WouldRefuse("a", 3));
  violations.Admit("a", 3);
  EXPECT_TRUE(violations.WouldRefuse("a", 3));
}

}  // namespace
}  // namespace fanyi
