// Transactions in the log: the producer rules for transactional batches (opening, continuing,
// INVALID_TXN_STATE, the verification guard), markers (their bytes, their fencing checks and
// effects), the first unstable offset, the .txnindex (written, read, truncated, deleted and
// rebuilt after a crash), followers and the snapshots that carry transactions.
#include <gtest/gtest.h>

#include "brokerd/storage/control_batch.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/producer_state.h"
#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

LogConfig config() {
  LogConfig c;
  c.segment_bytes = 1 << 20;
  c.retention_ms = -1;
  c.file_delete_delay_ms = 0;
  return c;
}

Bytes txn_batch(int64_t pid, int16_t epoch, int32_t seq, int n, bool transactional = true) {
  BatchOptions o;
  o.producer_id = pid;
  o.producer_epoch = epoch;
  o.base_sequence = seq;
  o.transactional = transactional;
  BatchBuilder b(o);
  for (int i = 0; i < n; ++i) b.add(1000 + i, "k" + std::to_string(i), "v");
  return b.build();
}

AppendResult put(Log& log, int64_t pid, int16_t epoch, int32_t seq, int n = 1,
                 TxnAppendMode mode = TxnAppendMode::unverified(), bool transactional = true) {
  Bytes b = txn_batch(pid, epoch, seq, n, transactional);
  return log.append(b, 3, 1000, AppendOrigin::client, mode);
}

AppendResult mark(Log& log, int64_t pid, int16_t epoch, ControlType type, int32_t coordinator_epoch = 0) {
  return log.append_marker(TxnMarker{pid, epoch, coordinator_epoch, type}, 3, 2000);
}

// Every batch of the log, as stored.
Bytes read_log(const Log& log) {
  auto r = log.read(log.log_start_offset(), INT32_MAX, true, INT64_MAX);
  return testing::read_all(r.records);
}

TEST(ControlBatch, MarkerBytesAreKafkas) {
  Bytes b = build_marker_batch(TxnMarker{42, 3, 7, ControlType::commit}, 1234);
  RecordBatchView v(b);
  EXPECT_TRUE(v.is_control());
  EXPECT_TRUE(v.is_transactional());
  EXPECT_EQ(v.base_sequence(), -1);
  EXPECT_EQ(v.producer_id(), 42);
  EXPECT_EQ(v.producer_epoch(), 3);
  EXPECT_EQ(v.records_count(), 1);
  EXPECT_TRUE(v.crc_valid());
  RecordReader reader(v);
  Record r;
  ASSERT_TRUE(reader.next(r));
  ASSERT_TRUE(r.key && r.value);
  const std::vector<uint8_t> key = {0, 0, 0, 1}, value = {0, 0, 0, 0, 0, 7};
  ASSERT_EQ(r.key->size(), key.size());
  ASSERT_EQ(r.value->size(), value.size());
  for (size_t i = 0; i < key.size(); ++i) EXPECT_EQ(std::to_integer<uint8_t>((*r.key)[i]), key[i]);
  for (size_t i = 0; i < value.size(); ++i) EXPECT_EQ(std::to_integer<uint8_t>((*r.value)[i]), value[i]);
  auto m = parse_marker_batch(v);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, ControlType::commit);
  EXPECT_EQ(m->coordinator_epoch, 7);
  EXPECT_EQ(m->producer_id, 42);
}

TEST(TxnProducerState, TransactionalBatchOpensATransactionAtItsBaseOffset) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  testing::append(*log, 2);  // offsets 0-1, no producer
  ASSERT_EQ(put(*log, 7, 0, 0, 3).base_offset, 2);
  const ProducerEntry* e = log->producer_state().find(7);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->current_txn_first_offset, 2);
  EXPECT_EQ(log->first_unstable_offset(), 2);
  ASSERT_EQ(put(*log, 7, 0, 3, 1).error, ErrorCode::none);  // continues
  EXPECT_EQ(log->producer_state().find(7)->current_txn_first_offset, 2);
}

TEST(TxnProducerState, NonTransactionalBatchDuringATransactionIsInvalidTxnState) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  ASSERT_EQ(put(*log, 7, 0, 0, 1).error, ErrorCode::none);
  EXPECT_EQ(put(*log, 7, 0, 1, 1, TxnAppendMode::unverified(), false).error, ErrorCode::invalid_txn_state);
  EXPECT_EQ(log->log_end_offset(), 1);
}

TEST(TxnProducerState, NotAllowedRefusesTransactionalBatches) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  auto r = put(*log, 7, 0, 0, 1, TxnAppendMode::not_allowed());
  EXPECT_EQ(r.error, ErrorCode::invalid_txn_state);
  EXPECT_EQ(r.message, "Record was not part of an ongoing transaction");
  EXPECT_EQ(log->log_end_offset(), 0);
}

TEST(TxnProducerState, GuardOpensOnlyWithTheCurrentGuard) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  const uint64_t g = log->producer_state().start_verification(7, 0, 0);
  EXPECT_NE(g, 0u);
  EXPECT_EQ(log->producer_state().start_verification(7, 0, 0), g);  // the same verification
  EXPECT_EQ(put(*log, 7, 0, 0, 1, TxnAppendMode::verified(g + 1)).error, ErrorCode::invalid_txn_state);
  ASSERT_EQ(put(*log, 7, 0, 0, 1, TxnAppendMode::verified(g)).error, ErrorCode::none);
  EXPECT_EQ(log->producer_state().verification(7), nullptr);  // spent by the opening write
  // Continuing the open transaction needs no guard.
  EXPECT_EQ(put(*log, 7, 0, 1, 1, TxnAppendMode::verified(0)).error, ErrorCode::none);
}

TEST(TxnProducerState, MarkerClearsTheVerificationSoALateWriteIsRefused) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  const uint64_t g = log->producer_state().start_verification(7, 0, 0);
  // The coordinator aborted (timeout) before the verified write arrived.
  ASSERT_EQ(mark(*log, 7, 0, ControlType::abort).error, ErrorCode::none);
  EXPECT_EQ(log->producer_state().verification(7), nullptr);
  EXPECT_EQ(put(*log, 7, 0, 0, 1, TxnAppendMode::verified(g)).error, ErrorCode::invalid_txn_state);
  EXPECT_FALSE(log->first_unstable_offset());
}

TEST(TxnMarkers, CommitEndsTheTransaction) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 7, 0, 0, 2);
  put(*log, 8, 0, 0, 1);
  EXPECT_EQ(log->first_unstable_offset(), 0);
  auto r = mark(*log, 7, 0, ControlType::commit, 4);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.base_offset, 3);
  EXPECT_EQ(log->log_end_offset(), 4);
  EXPECT_EQ(log->first_unstable_offset(), 2);
  const ProducerEntry* e = log->producer_state().find(7);
  EXPECT_FALSE(e->in_transaction());
  EXPECT_EQ(e->coordinator_epoch, 4);
  EXPECT_TRUE(log->aborted_transactions(0, 100).empty());  // a commit is not indexed
  // The marker is in the log as a control batch.
  Bytes all = read_log(*log);
  EXPECT_EQ(testing::batch_bases(all), (std::vector<int64_t>{0, 2, 3}));
}

TEST(TxnMarkers, FencingChecks) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 7, 2, 0, 1);
  EXPECT_EQ(mark(*log, 7, 1, ControlType::abort).error, ErrorCode::producer_fenced);
  ASSERT_EQ(mark(*log, 7, 2, ControlType::abort, 5).error, ErrorCode::none);
  EXPECT_EQ(mark(*log, 7, 2, ControlType::abort, 4).error, ErrorCode::transaction_coordinator_fenced);
  EXPECT_EQ(log->log_end_offset(), 2);
}

TEST(TxnMarkers, MarkerWithoutATransactionIsWrittenAndChangesNothingElse) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 8, 0, 0, 1);
  auto r = mark(*log, 7, 0, ControlType::abort);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.base_offset, 1);
  EXPECT_TRUE(log->aborted_transactions(0, 100).empty());
  EXPECT_EQ(log->first_unstable_offset(), 0);  // producer 8's transaction is still open
}

TEST(TxnIndexFile, AbortIsIndexedWithKafkasLayout) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 8, 0, 0, 1);     // 0: producer 8 opens
  put(*log, 7, 0, 0, 2);     // 1-2: producer 7 opens
  mark(*log, 7, 0, ControlType::abort);  // 3
  auto aborted = log->aborted_transactions(0, 100);
  ASSERT_EQ(aborted.size(), 1u);
  EXPECT_EQ(aborted[0], (AbortedTxn{7, 1, 3, 0}));  // LSO held at 0 by producer 8
  fs::path file = dir.path() / "00000000000000000000.txnindex";
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(fs::file_size(file), 34u);
  // Overlap rules: marker at or after `from`, first offset below `upper`.
  EXPECT_EQ(log->aborted_transactions(4, 100).size(), 0u);
  EXPECT_EQ(log->aborted_transactions(3, 100).size(), 1u);
  EXPECT_EQ(log->aborted_transactions(0, 1).size(), 0u);
  EXPECT_EQ(log->aborted_transactions(0, 2).size(), 1u);
}

TEST(TxnIndexFile, TruncationDropsEntriesAndRebuildsOngoingTransactions) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 7, 0, 0, 2);                 // 0-1
  mark(*log, 7, 0, ControlType::abort);  // 2
  put(*log, 9, 0, 0, 1);                 // 3
  mark(*log, 9, 0, ControlType::commit); // 4
  EXPECT_FALSE(log->first_unstable_offset());
  log->truncate_to(4);  // the commit goes: producer 9's transaction is open again
  EXPECT_EQ(log->first_unstable_offset(), 3);
  EXPECT_EQ(log->aborted_transactions(0, 100).size(), 1u);
  log->truncate_to(2);  // the abort goes too
  EXPECT_TRUE(log->aborted_transactions(0, 100).empty());
  EXPECT_EQ(log->first_unstable_offset(), 0);
  EXPECT_FALSE(fs::exists(dir.path() / "00000000000000000000.txnindex"));
}

TEST(TxnIndexFile, DeletedAndRolledWithItsSegment) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 7, 0, 0, 2);
  mark(*log, 7, 0, ControlType::abort);
  log->roll(3000);
  testing::append(*log, 1);
  EXPECT_EQ(log->aborted_transactions(3, 100).size(), 0u);
  EXPECT_EQ(log->aborted_transactions(2, 100).size(), 1u);
  ASSERT_EQ(log->delete_records_before(3), ErrorCode::none);
  EXPECT_FALSE(fs::exists(dir.path() / "00000000000000000000.txnindex"));
  EXPECT_TRUE(log->aborted_transactions(0, 100).empty());
}

TEST(TxnRecovery, CleanRestartKeepsTransactionsThroughTheSnapshot) {
  TempDir dir;
  {
    auto log = Log::open(dir.path(), config(), true);
    put(*log, 7, 0, 0, 2);
    put(*log, 8, 0, 0, 1);
    mark(*log, 8, 0, ControlType::commit, 3);
  }
  auto log = Log::open(dir.path(), config(), true);
  EXPECT_EQ(log->first_unstable_offset(), 0);
  EXPECT_EQ(log->producer_state().find(8)->coordinator_epoch, 3);
  EXPECT_EQ(put(*log, 7, 0, 2, 1, TxnAppendMode::verified(0)).error, ErrorCode::none);  // continues
}

TEST(TxnRecovery, CrashRebuildsOngoingTransactionsAndTheTxnIndex) {
  TempDir dir;
  fs::path crashed = dir.path() / "crashed";
  std::unordered_map<int64_t, ProducerEntry> before;
  {
    auto log = Log::open(dir.path() / "p", config(), true);
    put(*log, 7, 0, 0, 2);                 // 0-1
    put(*log, 8, 0, 0, 1);                 // 2
    mark(*log, 7, 0, ControlType::abort, 1);  // 3
    put(*log, 9, 0, 0, 1);                 // 4
    before = log->producer_state().producers();
    // A crash: the files as they are, no clean close, no snapshot at the log end, and the
    // .txnindex lost (recovery rebuilds it from the markers).
    fs::create_directories(crashed);
    for (const auto& e : fs::directory_iterator(dir.path() / "p"))
      if (e.is_regular_file() && e.path().extension() != ".txnindex")
        fs::copy_file(e.path(), crashed / e.path().filename());
  }
  auto log = Log::open(crashed, config(), false);
  EXPECT_EQ(log->producer_state().producers(), before);
  EXPECT_EQ(log->first_unstable_offset(), 2);
  auto aborted = log->aborted_transactions(0, 100);
  ASSERT_EQ(aborted.size(), 1u);
  EXPECT_EQ(aborted[0], (AbortedTxn{7, 0, 3, 2}));
}

TEST(TxnSnapshot, Version2CarriesTransactionsAndVersion1StillLoads) {
  std::unordered_map<int64_t, ProducerEntry> m;
  ProducerEntry e;
  e.producer_id = 5;
  e.epoch = 2;
  e.last_timestamp = 99;
  e.batches.push_back(ProducerBatch{0, 1, 10, 11, 99});
  e.current_txn_first_offset = 10;
  e.coordinator_epoch = 6;
  m[5] = e;
  auto v2 = decode_producer_snapshot(encode_producer_snapshot(m));
  ASSERT_TRUE(v2);
  ASSERT_EQ(v2->size(), 1u);
  EXPECT_EQ((*v2)[0], e);
  auto v1 = decode_producer_snapshot(encode_producer_snapshot(m, 1));
  ASSERT_TRUE(v1);
  EXPECT_EQ((*v1)[0].current_txn_first_offset, -1);
  EXPECT_EQ((*v1)[0].coordinator_epoch, -1);
  EXPECT_EQ((*v1)[0].batches, e.batches);
  EXPECT_FALSE(decode_producer_snapshot(encode_producer_snapshot(m, 3)));
}

TEST(TxnReplica, FollowerLearnsTransactionsAndMarkersFromTheLeader) {
  TempDir dir;
  auto leader = Log::open(dir.path() / "leader", config(), true);
  put(*leader, 7, 0, 0, 2);
  put(*leader, 8, 0, 0, 1);
  mark(*leader, 7, 0, ControlType::abort, 2);
  auto follower = Log::open(dir.path() / "follower", config(), true);
  Bytes all = read_log(*leader);
  ASSERT_EQ(follower->append_replica(all, 5000).error, ErrorCode::none);
  EXPECT_EQ(follower->producer_state().producers(), leader->producer_state().producers());
  EXPECT_EQ(follower->first_unstable_offset(), 2);
  EXPECT_EQ(follower->aborted_transactions(0, 100), leader->aborted_transactions(0, 100));
  // After failover the follower, now leader, checks the next marker against what it learned.
  EXPECT_EQ(mark(*follower, 7, 0, ControlType::abort, 1).error, ErrorCode::transaction_coordinator_fenced);
  EXPECT_EQ(mark(*follower, 8, 0, ControlType::commit, 2).error, ErrorCode::none);
  EXPECT_FALSE(follower->first_unstable_offset());
}

// A read_committed read asks for the aborted transactions up to one past its last batch.
TEST(TxnIndexFile, ReadsReportWhereTheyEndForTheAbortedTransactionsQuery) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 7, 0, 0, 2);                 // 0-1
  mark(*log, 7, 0, ControlType::abort);  // 2
  put(*log, 8, 0, 0, 3);                 // 3-5
  mark(*log, 8, 0, ControlType::abort);  // 6
  auto first = log->read(0, 1, true, INT64_MAX);  // one batch: 0-1
  EXPECT_EQ(first.next_offset, 2);
  auto aborted = log->aborted_transactions(0, first.next_offset);
  ASSERT_EQ(aborted.size(), 1u);
  EXPECT_EQ(aborted[0].producer_id, 7);
  auto rest = log->read(3, INT32_MAX, true, 6);  // stops before the marker at 6
  EXPECT_EQ(rest.next_offset, 6);
  aborted = log->aborted_transactions(3, rest.next_offset);
  ASSERT_EQ(aborted.size(), 1u);
  EXPECT_EQ(aborted[0].producer_id, 8);
  EXPECT_EQ(log->read(7, INT32_MAX, true, INT64_MAX).next_offset, -1);  // nothing read
}

TEST(TxnProducerState, ExpiryKeepsProducersInATransaction) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 7, 0, 0, 1);
  put(*log, 8, 0, 0, 1, TxnAppendMode::unverified(), false);
  EXPECT_EQ(log->producer_state().expire(1'000'000, 10), 1u);
  EXPECT_NE(log->producer_state().find(7), nullptr);
}

}  // namespace
}  // namespace brokerd::storage

namespace brokerd::storage {
namespace {

// TxnOffsetCommit: the group coordinator writes the producer's offsets as transactional
// batches without a sequence. Each one is written, whatever came before: none is taken for a
// retry of an earlier one (same record count) or refused as out of order (another count).
TEST(TxnCoordinatorBatches, WrittenWithoutSequenceChecks) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  auto coordinator = [&](int n) {
    Bytes b = txn_batch(9, 2, -1, n);
    return log->append(b, 3, 1000, AppendOrigin::coordinator);
  };
  auto first = coordinator(2);
  ASSERT_EQ(first.error, ErrorCode::none);
  EXPECT_FALSE(first.duplicate);
  ASSERT_EQ(mark(*log, 9, 2, ControlType::commit).error, ErrorCode::none);
  auto same_count = coordinator(2);
  ASSERT_EQ(same_count.error, ErrorCode::none) << same_count.message;
  EXPECT_FALSE(same_count.duplicate) << "a new transaction's offsets, not a retry";
  EXPECT_EQ(same_count.base_offset, 3);
  auto other_count = coordinator(3);
  ASSERT_EQ(other_count.error, ErrorCode::none) << other_count.message;
  EXPECT_EQ(log->log_end_offset(), 8);
  // A stale epoch is still fenced.
  Bytes stale = txn_batch(9, 1, -1, 1);
  EXPECT_EQ(log->append(stale, 3, 1000, AppendOrigin::coordinator).error, ErrorCode::invalid_producer_epoch);
}

}  // namespace
}  // namespace brokerd::storage
