#include "brokerd/partitions/visit_slice.h"

#include <gtest/gtest.h>

#include <vector>

namespace brokerd::partitions {
namespace {

TEST(VisitSlice, ASmallShardIsVisitedWholeAtEveryTick) {
  size_t cursor = 0;
  for (int tick = 0; tick < 3; ++tick) {
    auto s = next_visit_slice(1031, 1000, 5000, 5, cursor);
    EXPECT_EQ(s.from, 0u);
    EXPECT_EQ(s.to, 1031u);
    EXPECT_EQ(s.ticks_per_pass, 1u);
  }
}

// Every bucket at least once in each run of ticks_per_pass ticks, however the passes line up.
void expect_passes_cover_every_bucket(size_t buckets, size_t partitions, size_t max_ticks, size_t want_ticks) {
  size_t cursor = 0;
  for (int pass = 0; pass < 4; ++pass) {
    std::vector<int> seen(buckets, 0);
    for (size_t tick = 0; tick < want_ticks; ++tick) {
      auto s = next_visit_slice(buckets, partitions, 5000, max_ticks, cursor);
      EXPECT_EQ(s.ticks_per_pass, want_ticks);
      for (size_t b = s.from; b < s.to; ++b) ++seen[b];
    }
    for (size_t b = 0; b < buckets; ++b) ASSERT_GE(seen[b], 1) << "bucket " << b << " pass " << pass;
  }
}

TEST(VisitSlice, ALargeShardIsVisitedInSlicesThatCoverItOncePerPass) {
  expect_passes_cover_every_bucket(12289, 12000, 5, 3);
  expect_passes_cover_every_bucket(62233, 60000, 5, 5);   // capped at max_ticks
  expect_passes_cover_every_bucket(62233, 60000, 2, 2);   // a short lag time: shorter passes
  expect_passes_cover_every_bucket(7, 60000, 5, 5);       // more slices than buckets need
}

TEST(VisitSlice, ACursorPastAShrunkMapStartsAgain) {
  size_t cursor = 9000;
  auto s = next_visit_slice(100, 12000, 5000, 5, cursor);
  EXPECT_EQ(s.from, 0u);
}

}  // namespace
}  // namespace brokerd::partitions
