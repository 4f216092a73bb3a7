#include "brokerd/raft/memory_persistence.h"

#include <gtest/gtest.h>

namespace brokerd::raft {
namespace {

std::vector<Entry> entries(Offset from, std::vector<Epoch> epochs) {
  std::vector<Entry> r;
  for (Epoch e : epochs) r.push_back(Entry{from++, e, false, "p"});
  return r;
}

TEST(MemoryRaftLog, OnlyFlushedEntriesSurviveCrash) {
  MemoryRaftLog log;
  log.append(entries(0, {1, 1, 2}));
  log.flush(2);
  log.append(entries(3, {2}));
  log.crash();
  EXPECT_EQ(log.end_offset(), 2);
  EXPECT_EQ(log.last_epoch(), 1);
}

TEST(MemoryRaftLog, EndOffsetForEpoch) {
  MemoryRaftLog log;
  log.append(entries(0, {1, 1, 3, 3, 5}));
  EXPECT_EQ(log.end_offset_for_epoch(1), (OffsetAndEpoch{2, 1}));
  EXPECT_EQ(log.end_offset_for_epoch(2), (OffsetAndEpoch{2, 1}));
  EXPECT_EQ(log.end_offset_for_epoch(3), (OffsetAndEpoch{4, 3}));
  EXPECT_EQ(log.end_offset_for_epoch(9), (OffsetAndEpoch{5, 5}));
  EXPECT_EQ(log.end_offset_for_epoch(0), (OffsetAndEpoch{0, 0}));
}

TEST(MemoryRaftLog, PrefixTruncationKeepsEpochAndChain) {
  MemoryRaftLog log;
  log.append(entries(0, {1, 1, 3, 3}));
  const auto chain = *log.chain_at(1);
  log.truncate_prefix({2, 1});
  EXPECT_EQ(log.start_offset(), 2);
  EXPECT_EQ(*log.epoch_at(1), 1);
  EXPECT_EQ(*log.chain_at(1), chain);
  EXPECT_EQ(log.end_offset_for_epoch(0), (OffsetAndEpoch{-1, -1}));
  EXPECT_EQ(log.end_offset_for_epoch(1), (OffsetAndEpoch{2, 1}));
  EXPECT_TRUE(log.read(0, 10).size() == 2);
}

TEST(MemoryRaftLog, TruncateAndResetLowerFlushedEnd) {
  MemoryRaftLog log;
  log.append(entries(0, {1, 1, 1}));
  log.flush(3);
  log.truncate_to(1);
  EXPECT_EQ(log.flushed_end_offset(), 1);
  log.reset({10, 4});
  EXPECT_EQ(log.start_offset(), 10);
  EXPECT_EQ(log.end_offset(), 10);
  EXPECT_EQ(log.last_epoch(), 4);
  EXPECT_THROW(log.append(entries(3, {4})), std::logic_error);
}

TEST(MemoryRaftLog, EqualChainsMeanEqualPrefixes) {
  MemoryRaftLog a, b;
  a.append(entries(0, {1, 1, 2}));
  b.append(entries(0, {1, 2, 2}));
  EXPECT_EQ(*a.chain_at(0), *b.chain_at(0));
  EXPECT_NE(*a.chain_at(2), *b.chain_at(2));
}

TEST(MemoryQuorumStateStore, KeepsLastWrite) {
  MemoryQuorumStateStore s;
  EXPECT_FALSE(s.read());
  s.write({3, 2, kNoReplica});
  EXPECT_EQ(s.read()->voted_for, 2);
}

}  // namespace
}  // namespace brokerd::raft
