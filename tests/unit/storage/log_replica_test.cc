// A follower's log: the leader's batches appended as they are, and a reset to a later start.
#include <gtest/gtest.h>

#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::make_batch;
using testing::read_all;
using testing::TempDir;

LogConfig small_segments() {
  LogConfig c;
  c.segment_bytes = 4096;
  return c;
}

// The leader's log: batches appended through the client path, read back whole.
struct LeaderAndFollower : ::testing::Test {
  TempDir leader_dir, follower_dir;
  std::unique_ptr<Log> leader = Log::open(leader_dir.path(), small_segments(), true);
  std::unique_ptr<Log> follower = Log::open(follower_dir.path(), small_segments(), true);

  void leader_writes(int batches, int32_t epoch) {
    for (int i = 0; i < batches; ++i) {
      Bytes b = make_batch(3, 200);
      ASSERT_EQ(leader->append(b, epoch, 1000 + i, AppendOrigin::client).error, ErrorCode::none);
    }
  }
  Bytes leader_bytes(int64_t from) {
    return read_all(leader->read(from, 1 << 20, true, leader->log_end_offset()).records);
  }
};

TEST_F(LeaderAndFollower, BatchesArriveByteForByte) {
  leader_writes(10, 4);
  Bytes all = leader_bytes(0);
  auto res = follower->append_replica(all, 5000);
  ASSERT_EQ(res.error, ErrorCode::none) << res.message;
  EXPECT_EQ(res.base_offset, 0);
  EXPECT_EQ(res.last_offset, 29);
  EXPECT_EQ(follower->log_end_offset(), leader->log_end_offset());
  EXPECT_EQ(read_all(follower->read(0, 1 << 20, true, follower->log_end_offset()).records), all);
  RecordBatchView first(all);
  EXPECT_EQ(first.partition_leader_epoch(), 4);
}

TEST_F(LeaderAndFollower, ABatchBelowTheLogEndIsRefused) {
  leader_writes(3, 1);
  ASSERT_EQ(follower->append_replica(leader_bytes(0), 5000).error, ErrorCode::none);
  auto res = follower->append_replica(leader_bytes(3), 5000);  // offsets 3.. again
  EXPECT_NE(res.error, ErrorCode::none);
  EXPECT_EQ(follower->log_end_offset(), 9);
}

TEST_F(LeaderAndFollower, OffsetsACompactedLeaderSkipsAreSkippedToo) {
  leader_writes(3, 1);
  ASSERT_EQ(follower->append_replica(leader_bytes(0), 5000).error, ErrorCode::none);
  follower->truncate_to(3);  // as if the batch [3, 5] had been cleaned away on the leader
  auto res = follower->append_replica(leader_bytes(6), 5000);
  ASSERT_EQ(res.error, ErrorCode::none) << res.message;
  EXPECT_EQ(res.base_offset, 6);
  EXPECT_EQ(follower->log_end_offset(), 9);
  EXPECT_EQ(read_all(follower->read(3, 1 << 20, true, 9).records), leader_bytes(6));
}

TEST_F(LeaderAndFollower, ALogStartInsideTheFirstBatchKeepsTheBatchWhole) {
  leader_writes(3, 1);
  follower->reset_to(4, 5000);  // the leader's log start, inside the batch [3, 5]
  auto res = follower->append_replica(leader_bytes(4), 5000);
  ASSERT_EQ(res.error, ErrorCode::none) << res.message;
  EXPECT_EQ(follower->log_start_offset(), 4);
  EXPECT_EQ(follower->log_end_offset(), 9);
  EXPECT_EQ(read_all(follower->read(4, 1 << 20, true, 9).records), leader_bytes(4));
  // Not in a log that holds batches already.
  EXPECT_NE(follower->append_replica(leader_bytes(4), 5000).error, ErrorCode::none);
}

TEST_F(LeaderAndFollower, ACorruptBatchIsRefused) {
  leader_writes(2, 1);
  Bytes all = leader_bytes(0);
  all[all.size() - 1] ^= std::byte{0x40};
  auto res = follower->append_replica(all, 5000);
  EXPECT_NE(res.error, ErrorCode::none);
  EXPECT_EQ(follower->log_end_offset(), 0);
}

TEST_F(LeaderAndFollower, IdempotentProducersAreKnownOnTheFollower) {
  BatchOptions o;
  o.producer_id = 42;
  o.producer_epoch = 0;
  o.base_sequence = 0;
  BatchBuilder b(o);
  b.add(1000, "k", "v");
  b.add(1001, "k", "w");
  Bytes batch = b.build();
  ASSERT_EQ(leader->append(batch, 1, 1000).error, ErrorCode::none);
  ASSERT_EQ(follower->append_replica(leader_bytes(0), 5000).error, ErrorCode::none);
  const ProducerEntry* e = follower->producer_state().find(42);
  ASSERT_NE(e, nullptr);
  // The same batch retried to the follower once it leads is answered as a duplicate.
  Bytes retry = b.build();
  auto res = follower->append(retry, 2, 6000);
  EXPECT_EQ(res.error, ErrorCode::none);
  EXPECT_TRUE(res.duplicate);
  EXPECT_EQ(res.base_offset, 0);
}

TEST_F(LeaderAndFollower, ResetStartsAgainEmptyAtTheGivenOffset) {
  leader_writes(4, 1);
  ASSERT_EQ(follower->append_replica(leader_bytes(0), 5000).error, ErrorCode::none);
  follower->reset_to(500, 6000);
  EXPECT_EQ(follower->log_start_offset(), 500);
  EXPECT_EQ(follower->log_end_offset(), 500);
  EXPECT_EQ(follower->segment_count(), 1u);
  // And it survives a reopen.
  follower->close();
  follower = Log::open(follower_dir.path(), small_segments(), true);
  EXPECT_EQ(follower->log_start_offset(), 500);
  EXPECT_EQ(follower->log_end_offset(), 500);
}

}  // namespace
}  // namespace brokerd::storage
