#include "brokerd/quota/throttler.h"

#include <gtest/gtest.h>

namespace {

using brokerd::quota::Rate;
using brokerd::quota::Throttler;

TEST(Rate, AFirstBurstIsSpreadOverTheWindowLessOneSample) {
  Rate r(11, 1000);
  r.record(10'000, 0);
  EXPECT_DOUBLE_EQ(r.per_second(0), 1000.0);  // 10,000 bytes over 10 s
  EXPECT_EQ(r.window_ms(500), 10'000);
}

TEST(Rate, OldSamplesLeaveTheWindow) {
  Rate r(3, 1000);
  r.record(3000, 0);
  r.record(3000, 2500);
  EXPECT_DOUBLE_EQ(r.per_second(2500), 6000.0 / 2.5);
  EXPECT_DOUBLE_EQ(r.per_second(3500), 3000.0 / 2.0);  // the first sample is gone
}

TEST(Throttler, WithinTheQuotaNoWaitAboveItKafkasFormula) {
  Throttler t(11, 1000);
  EXPECT_EQ(t.record("b", 5000, 1000, 0), 0);  // 500 B/s over 10 s
  // 20,000 B in 10 s = 2,000 B/s, twice the quota: wait (2000-1000)/1000 x 10 s.
  EXPECT_EQ(t.record("b", 15'000, 1000, 100), 10'000);
  t.unrecord("b", 15'000, 100);
  EXPECT_EQ(t.record("b", 0, 1000, 100), 0);
  EXPECT_EQ(t.record("other", 100'000, 1000, 100), 11'000);  // capped at the whole window
  EXPECT_EQ(t.buckets(), 2u);
}

}  // namespace
