// The leader-epoch cache: where epochs start and end, truncation, the checkpoint format.
#include <gtest/gtest.h>

#include "brokerd/replication/epoch_cache.h"

namespace brokerd::replication {
namespace {

LeaderEpochCache cache_of(std::vector<EpochEntry> e) { return LeaderEpochCache(std::move(e)); }

TEST(EpochCache, EndOfAnEpochIsTheNextOnesStart) {
  auto c = cache_of({{1, 0}, {3, 10}, {5, 25}});
  EXPECT_EQ(c.end_for(1, 40), (EpochEnd{1, 10}));
  EXPECT_EQ(c.end_for(3, 40), (EpochEnd{3, 25}));
  EXPECT_EQ(c.end_for(5, 40), (EpochEnd{5, 40}));  // the latest ends at the log end
}

TEST(EpochCache, AnEpochNeverSeenAnswersTheLargestBelowIt) {
  auto c = cache_of({{1, 0}, {3, 10}, {5, 25}});
  EXPECT_EQ(c.end_for(2, 40), (EpochEnd{1, 10}));
  EXPECT_EQ(c.end_for(4, 40), (EpochEnd{3, 25}));
  EXPECT_EQ(c.end_for(0, 40), (EpochEnd{0, 0}));  // older than all: ends where the first starts
  EXPECT_EQ(c.end_for(6, 40), EpochEnd{});        // newer than all: unknown
  EXPECT_EQ(LeaderEpochCache().end_for(1, 5), EpochEnd{});
}

TEST(EpochCache, EpochAtAnOffset) {
  auto c = cache_of({{1, 0}, {3, 10}});
  EXPECT_EQ(c.epoch_at(0), 1);
  EXPECT_EQ(c.epoch_at(9), 1);
  EXPECT_EQ(c.epoch_at(10), 3);
  EXPECT_EQ(cache_of({{2, 5}}).epoch_at(4), kNoEpoch);
}

TEST(EpochCache, AssignDropsEntriesTheNewOneContradicts) {
  auto c = cache_of({{1, 0}, {3, 10}, {4, 12}});
  c.assign(4, 15);  // a later start of the latest epoch changes nothing
  EXPECT_EQ(c.entries().back(), (EpochEntry{4, 12}));
  c.assign(2, 10);  // epochs 3 and 4 from offset 10 on are gone
  EXPECT_EQ(c.entries(), (std::vector<EpochEntry>{{1, 0}, {2, 10}}));
}

TEST(EpochCache, TruncationFromEitherEnd) {
  auto c = cache_of({{1, 0}, {3, 10}, {5, 25}});
  c.truncate_from_end(25);
  EXPECT_EQ(c.entries(), (std::vector<EpochEntry>{{1, 0}, {3, 10}}));
  c.truncate_from_start(12);
  EXPECT_EQ(c.entries(), (std::vector<EpochEntry>{{3, 12}}));
  auto d = cache_of({{1, 0}, {3, 10}});
  d.truncate_from_start(10);
  EXPECT_EQ(d.entries(), (std::vector<EpochEntry>{{3, 10}}));
}

TEST(EpochCache, CheckpointRoundTripsInKafkasFormat) {
  auto c = cache_of({{0, 0}, {2, 117}});
  EXPECT_EQ(c.to_checkpoint(), "0\n2\n0 0\n2 117\n");
  auto back = LeaderEpochCache::from_checkpoint(c.to_checkpoint());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->entries(), c.entries());
  EXPECT_TRUE(LeaderEpochCache::from_checkpoint("0\n0\n"));
}

TEST(EpochCache, CorruptCheckpointsAreRefused) {
  for (const char* bad : {"", "1\n0\n", "0\n2\n0 0\n", "0\n1\n0 x\n", "0\n2\n3 10\n2 20\n", "0\n2\n1 10\n2 5\n",
                          "0\n1\n-1 0\n", "0\n1\n1 0\ntrailing"}) {
    EXPECT_FALSE(LeaderEpochCache::from_checkpoint(bad)) << bad;
  }
}

}  // namespace
}  // namespace brokerd::replication
