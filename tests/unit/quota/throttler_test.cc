#include "brokerd/quota/throttler.h"

#include <gtest/gtest.h>

namespace {

using brokerd::quota::Throttler;

TEST(Throttler, AFullBucketLetsTheWindowsBurstThrough) {
  Throttler t(11, 1000);  // an 11 s window: a burst of 11 s of the quota
  EXPECT_EQ(t.record("b", 11'000, 1000, 0), 0);
  EXPECT_EQ(t.record("b", 2'000, 1000, 0), 2'000);  // 2,000 B of debt at 1,000 B/s
}

TEST(Throttler, TheDebtIsPaidAtTheQuotasRate) {
  Throttler t(2, 1000);
  EXPECT_EQ(t.record("b", 2'000, 1000, 0), 0);
  EXPECT_EQ(t.record("b", 500, 1000, 0), 500);
  EXPECT_EQ(t.record("b", 0, 1000, 500), 0);     // paid after 500 ms
  EXPECT_EQ(t.record("b", 1000, 1000, 1000), 500);  // 500 B refilled since, 1,000 taken
  // A debt larger than the window: the wait is capped, the debt stays for the next requests.
  EXPECT_EQ(t.record("b", 10'000, 1000, 1000), 2'000);
  EXPECT_EQ(t.record("b", 0, 1000, 3000), 2'000);  // 8,500 B still owed 2 s later
}

TEST(Throttler, LongRunRateIsTheQuota) {
  // A client that always sends again when told: 1 KB every time it may, for 100 s.
  Throttler t(11, 1000);
  int64_t now = 0;
  double sent = 0;
  while (now < 100'000) {
    sent += 1000;
    now += std::max<int64_t>(t.record("b", 1000, 10'000, now), 1);
  }
  // 100 s at 10,000 B/s plus the first burst of 110,000 B.
  EXPECT_NEAR(sent, 100 * 10'000 + 110'000, 2'000);
}

TEST(Throttler, UnrecordGivesBackAndBucketsAreSeparate) {
  Throttler t(2, 1000);
  EXPECT_GT(t.record("a", 5'000, 1000, 0), 0);
  t.unrecord("a", 5'000, 0);
  EXPECT_EQ(t.record("a", 0, 1000, 0), 0);
  EXPECT_EQ(t.record("b", 1'000, 1000, 0), 0);
  EXPECT_EQ(t.buckets(), 2u);
}

}  // namespace
