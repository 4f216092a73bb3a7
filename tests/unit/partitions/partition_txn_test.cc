// A partition's transactions: the last stable offset (high watermark held back by ongoing
// transactions, never below the log start), markers through the leader, the verification
// guard of KIP-890 and the wake-up of read_committed fetches.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "brokerd/partitions/partition.h"
#include "unit/storage/storage_test_util.h"

namespace brokerd::partitions {
namespace {

using protocol::ErrorCode;
using storage::ControlType;
using storage::TxnAppendMode;
using storage::TxnMarker;
using storage::testing::TempDir;

constexpr int64_t kNow = storage::testing::kNow;

// A single-replica leader: every append is at once below the high watermark.
std::unique_ptr<Partition> leader(const std::filesystem::path& dir) {
  replication::ReplicaConfig cfg;
  cfg.broker_id = 1;
  storage::LogConfig lc;
  lc.retention_ms = -1;
  lc.file_delete_delay_ms = 0;
  auto p = std::make_unique<Partition>(TopicPartition{"t", 0}, protocol::Uuid{}, storage::Log::open(dir, lc, true), cfg);
  metadata::PartitionAssignment a;
  a.replicas = {1};
  a.isr = {1};
  a.leader = 1;
  a.leader_epoch = 1;
  p->apply_assignment(a, 1, kNow);
  return p;
}

Bytes batch(int64_t pid, int16_t epoch, int32_t seq, int n, bool transactional) {
  storage::BatchOptions o;
  o.producer_id = pid;
  o.producer_epoch = epoch;
  o.base_sequence = seq;
  o.transactional = transactional;
  storage::BatchBuilder b(o);
  for (int i = 0; i < n; ++i) b.add(kNow, "k", "v");
  return b.build();
}

storage::AppendResult produce(Partition& p, int64_t pid, int32_t seq, int n, TxnAppendMode mode,
                              bool transactional = true) {
  Bytes b = batch(pid, 0, seq, n, transactional);
  return p.append(b, kNow, storage::AppendOrigin::client, mode);
}

TEST(PartitionTxn, LastStableOffsetStopsAtTheOldestOngoingTransaction) {
  TempDir dir;
  auto p = leader(dir.path() / "t-0");
  ASSERT_EQ(produce(*p, 1, 0, 2, TxnAppendMode::not_allowed(), false).error, ErrorCode::none);  // 0-1
  EXPECT_EQ(p->high_watermark(), 2);
  EXPECT_EQ(p->last_stable_offset(), 2);
  ASSERT_EQ(produce(*p, 7, 0, 3, TxnAppendMode::unverified()).error, ErrorCode::none);  // 2-4
  ASSERT_EQ(produce(*p, 8, 0, 1, TxnAppendMode::unverified()).error, ErrorCode::none);  // 5
  EXPECT_EQ(p->high_watermark(), 6);
  EXPECT_EQ(p->last_stable_offset(), 2);
  EXPECT_TRUE(p->has_ongoing_transaction(7, 0));
  EXPECT_FALSE(p->has_ongoing_transaction(7, 1));
  ASSERT_EQ(p->append_marker(TxnMarker{7, 0, 0, ControlType::commit}, kNow).error, ErrorCode::none);  // 6
  EXPECT_FALSE(p->has_ongoing_transaction(7, 0));
  EXPECT_EQ(p->last_stable_offset(), 5);
  ASSERT_EQ(p->append_marker(TxnMarker{8, 0, 0, ControlType::abort}, kNow).error, ErrorCode::none);  // 7
  EXPECT_EQ(p->last_stable_offset(), 8);
  auto aborted = p->aborted_transactions(0, 8);
  ASSERT_EQ(aborted.size(), 1u);
  EXPECT_EQ(aborted[0].producer_id, 8);
  EXPECT_EQ(aborted[0].first_offset, 5);
}

TEST(PartitionTxn, LastStableOffsetIsNeverBelowTheLogStart) {
  TempDir dir;
  auto p = leader(dir.path() / "t-0");
  ASSERT_EQ(produce(*p, 7, 0, 2, TxnAppendMode::unverified()).error, ErrorCode::none);  // 0-1, open
  ASSERT_EQ(produce(*p, 1, 0, 2, TxnAppendMode::not_allowed(), false).error, ErrorCode::none);
  p->log().roll(kNow);
  ASSERT_EQ(produce(*p, 1, 2, 1, TxnAppendMode::not_allowed(), false).error, ErrorCode::none);
  ASSERT_EQ(p->log().delete_records_before(3, kNow), ErrorCode::none);
  EXPECT_EQ(p->last_stable_offset(), 3);
}

TEST(PartitionTxn, VerificationGuardAndDefaultRefusal) {
  TempDir dir;
  auto p = leader(dir.path() / "t-0");
  EXPECT_EQ(produce(*p, 7, 0, 1, TxnAppendMode::not_allowed()).error, ErrorCode::invalid_txn_state);
  Bytes b = batch(7, 0, 0, 1, true);
  EXPECT_EQ(p->append(b, kNow, storage::AppendOrigin::client).error, ErrorCode::invalid_txn_state);  // the default
  const uint64_t guard = p->start_verification(7, 0, 0);
  ASSERT_NE(guard, 0u);
  EXPECT_EQ(produce(*p, 7, 0, 1, TxnAppendMode::verified(guard + 7)).error, ErrorCode::invalid_txn_state);
  ASSERT_EQ(produce(*p, 7, 0, 1, TxnAppendMode::verified(guard)).error, ErrorCode::none);
  // A second verified-then-delayed write after an abort is refused.
  const uint64_t again = p->start_verification(7, 0, 1);
  ASSERT_EQ(p->append_marker(TxnMarker{7, 0, 0, ControlType::abort}, kNow).error, ErrorCode::none);
  EXPECT_EQ(produce(*p, 7, 1, 1, TxnAppendMode::verified(again)).error, ErrorCode::invalid_txn_state);
}

TEST(PartitionTxn, ReadCommittedWatchersWaitForTheLastStableOffset) {
  TempDir dir;
  boost::asio::io_context io;
  auto p = leader(dir.path() / "t-0");
  ASSERT_EQ(produce(*p, 7, 0, 2, TxnAppendMode::unverified()).error, ErrorCode::none);  // 0-1 open
  auto committed = std::make_shared<FetchWaiter>(io.get_executor());
  auto uncommitted = std::make_shared<FetchWaiter>(io.get_executor());
  p->watch(committed, 0, Partition::ReadBound::last_stable);
  p->watch(uncommitted, 0, Partition::ReadBound::high_watermark);
  EXPECT_FALSE(committed->woken());  // the LSO is 0: nothing committed to read
  EXPECT_TRUE(uncommitted->woken());
  ASSERT_EQ(p->append_marker(TxnMarker{7, 0, 0, ControlType::commit}, kNow).error, ErrorCode::none);
  EXPECT_TRUE(committed->woken());
  EXPECT_EQ(p->read_bound(Partition::ReadBound::last_stable), 3);
}

}  // namespace
}  // namespace brokerd::partitions
