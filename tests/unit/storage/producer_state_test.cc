// The idempotent-producer rules (sequences, epochs, duplicates of the last five batches,
// wrap-around) through Log::append, and the persistence of the state: snapshots at roll and
// close, rebuild from the log after a crash, retention and truncation.
#include <gtest/gtest.h>

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
  return c;
}

Bytes idem_batch(int64_t pid, int16_t epoch, int32_t seq, int n, int64_t ts = 1000) {
  BatchOptions o;
  o.producer_id = pid;
  o.producer_epoch = epoch;
  o.base_sequence = seq;
  BatchBuilder b(o);
  for (int i = 0; i < n; ++i) b.add(ts + i, "k" + std::to_string(i), "v");
  return b.build();
}

AppendResult put(Log& log, int64_t pid, int16_t epoch, int32_t seq, int n = 1, int64_t now = 1000) {
  Bytes b = idem_batch(pid, epoch, seq, n, now);
  return log.append(b, 0, now);
}

TEST(Sequence, WrapsAroundInt32Max) {
  EXPECT_EQ(increment_sequence(5, 3), 8);
  EXPECT_EQ(increment_sequence(INT32_MAX, 1), 0);
  EXPECT_EQ(increment_sequence(INT32_MAX - 1, 3), 1);
  EXPECT_EQ(decrement_sequence(1, 3), INT32_MAX - 1);
  EXPECT_EQ(decrement_sequence(8, 3), 5);
  EXPECT_TRUE(in_sequence(INT32_MAX, 0));
  EXPECT_TRUE(in_sequence(-1, 0));
  EXPECT_FALSE(in_sequence(INT32_MAX, INT32_MIN));
  EXPECT_FALSE(in_sequence(3, 5));
}

TEST(ProducerState, InOrderBatchesAreWritten) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  EXPECT_EQ(put(*log, 7, 0, 0, 3).base_offset, 0);
  EXPECT_EQ(put(*log, 7, 0, 3, 2).base_offset, 3);
  const ProducerEntry* e = log->producer_state().find(7);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->last_seq(), 4);
  EXPECT_EQ(e->last_offset(), 4);
  EXPECT_EQ(log->log_end_offset(), 5);
}

TEST(ProducerState, DuplicateOfEachOfTheLastFiveReturnsItsOffsets) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 1, 0, 0, 10);  // falls out of the window below
  for (int i = 0; i < 5; ++i) ASSERT_EQ(put(*log, 1, 0, 10 + 2 * i, 2).error, ErrorCode::none);
  const int64_t leo = log->log_end_offset();
  for (int i = 0; i < 5; ++i) {
    auto r = put(*log, 1, 0, 10 + 2 * i, 2);
    EXPECT_EQ(r.error, ErrorCode::none);
    EXPECT_TRUE(r.duplicate);
    EXPECT_EQ(r.base_offset, 10 + 2 * i);
    EXPECT_EQ(r.last_offset, 11 + 2 * i);
  }
  EXPECT_EQ(log->log_end_offset(), leo);
  // Older than the five kept: no longer recognised, and behind the sequence.
  EXPECT_EQ(put(*log, 1, 0, 0, 10).error, ErrorCode::out_of_order_sequence_number);
  // A different range over written sequences is not a duplicate.
  EXPECT_EQ(put(*log, 1, 0, 10, 3).error, ErrorCode::out_of_order_sequence_number);
  EXPECT_EQ(log->log_end_offset(), leo);
}

// Several batches in one append (never from a client, whose Produce v3+ carries one batch
// per partition, but possible for internal writers): the duplicate decision is per batch.
// Every offset the append answers must be readable afterwards.
Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

std::vector<int64_t> stored_bases(Log& log) {
  auto r = log.read(log.log_start_offset(), INT32_MAX, true, log.log_end_offset());
  return testing::batch_bases(testing::read_all(r.records));
}

TEST(ProducerState, SameBatchTwiceInOneAppendIsWrittenOnce) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  Bytes one = idem_batch(9, 0, 0, 2);
  Bytes payload = concat({one, one});
  auto r = log->append(payload, 0, 1000, AppendOrigin::coordinator);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_FALSE(r.duplicate);
  EXPECT_EQ(r.base_offset, 0);
  EXPECT_EQ(r.last_offset, 1);
  EXPECT_EQ(log->log_end_offset(), 2);
  EXPECT_EQ(stored_bases(*log), (std::vector<int64_t>{0}));
  EXPECT_EQ(put(*log, 9, 0, 2).base_offset, 2);
}

TEST(ProducerState, NewBatchThenRetryInOneAppendWritesTheNewOne) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  ASSERT_EQ(put(*log, 4, 0, 0).base_offset, 0);
  Bytes payload = concat({idem_batch(4, 0, 1, 1), idem_batch(4, 0, 0, 1)});
  auto r = log->append(payload, 0, 1000, AppendOrigin::coordinator);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_FALSE(r.duplicate);
  EXPECT_EQ(r.base_offset, 1);      // the new batch's offset
  EXPECT_EQ(log->log_end_offset(), 2);
  EXPECT_EQ(stored_bases(*log), (std::vector<int64_t>{0, 1}));
  // The producer's next batch follows on.
  auto next = put(*log, 4, 0, 2);
  EXPECT_EQ(next.error, ErrorCode::none);
  EXPECT_EQ(next.base_offset, 2);
}

TEST(ProducerState, RetryThenNewBatchInOneAppendWritesTheNewOne) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  ASSERT_EQ(put(*log, 4, 0, 0, 3).base_offset, 0);
  Bytes payload = concat({idem_batch(4, 0, 0, 3), idem_batch(4, 0, 3, 2)});
  auto r = log->append(payload, 0, 1000, AppendOrigin::coordinator);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.base_offset, 0);  // the retry's original offsets come first
  EXPECT_EQ(r.last_offset, 4);
  EXPECT_EQ(log->log_end_offset(), 5);
  EXPECT_EQ(stored_bases(*log), (std::vector<int64_t>{0, 3}));
}

TEST(ProducerState, ClientAppendsCarryExactlyOneBatch) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  Bytes payload = concat({idem_batch(4, 0, 0, 1), idem_batch(4, 0, 1, 1)});
  auto r = log->append(payload, 0, 1000, AppendOrigin::client);
  EXPECT_EQ(r.error, ErrorCode::invalid_record);
  EXPECT_EQ(log->log_end_offset(), 0);
}

TEST(ProducerState, GapIsOutOfOrder) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 1, 0, 0, 5);
  auto r = put(*log, 1, 0, 6, 1);
  EXPECT_EQ(r.error, ErrorCode::out_of_order_sequence_number);
  EXPECT_EQ(log->log_end_offset(), 5);
  EXPECT_EQ(put(*log, 1, 0, 5, 1).base_offset, 5);
}

TEST(ProducerState, EpochRules) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 1, 3, 0, 5);
  EXPECT_EQ(put(*log, 1, 2, 5, 1).error, ErrorCode::invalid_producer_epoch);  // fenced
  EXPECT_EQ(put(*log, 1, 4, 5, 1).error, ErrorCode::out_of_order_sequence_number);  // new epoch not at 0
  EXPECT_EQ(put(*log, 1, 4, 0, 2).error, ErrorCode::none);
  EXPECT_EQ(put(*log, 1, 3, 5, 1).error, ErrorCode::invalid_producer_epoch);
  // The old epoch's batches are gone: a retry of them is fenced, not a duplicate.
  EXPECT_EQ(put(*log, 1, 3, 0, 5).error, ErrorCode::invalid_producer_epoch);
  EXPECT_EQ(log->producer_state().find(1)->epoch, 4);
  // Producers are independent.
  EXPECT_EQ(put(*log, 2, 0, 0, 1).error, ErrorCode::none);
}

TEST(ProducerState, UnknownProducerIsAcceptedAtAnySequence) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  EXPECT_EQ(put(*log, 9, 1, 1234, 2).error, ErrorCode::none);
  EXPECT_EQ(put(*log, 9, 1, 1236, 1).error, ErrorCode::none);
  EXPECT_EQ(put(*log, 9, 1, 1238, 1).error, ErrorCode::out_of_order_sequence_number);
}

TEST(ProducerState, SequenceWrapsAround) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 1, 0, 0, 1);
  // Bring the producer to just below the wrap (a new producer may start anywhere).
  put(*log, 2, 0, INT32_MAX - 2, 2);  // INT32_MAX-2 .. INT32_MAX-1
  auto r = put(*log, 2, 0, INT32_MAX, 3);  // INT32_MAX, 0, 1
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(log->producer_state().find(2)->last_seq(), 1);
  EXPECT_EQ(put(*log, 2, 0, 2, 1).error, ErrorCode::none);
  auto dup = put(*log, 2, 0, INT32_MAX, 3);
  EXPECT_TRUE(dup.duplicate);
  EXPECT_EQ(dup.base_offset, r.base_offset);
  EXPECT_EQ(put(*log, 2, 0, 4, 1).error, ErrorCode::out_of_order_sequence_number);
}

TEST(ProducerState, NonIdempotentBatchesAreUntouched) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  Bytes b = testing::make_batch(3);
  EXPECT_EQ(log->append(b, 0, 1000).error, ErrorCode::none);
  Bytes c = testing::make_batch(3);
  EXPECT_EQ(log->append(c, 0, 1000).error, ErrorCode::none);
  EXPECT_TRUE(log->producer_state().producers().empty());
}

TEST(ProducerState, ExpiryForgetsIdleProducers) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 1, 0, 0, 1, 1000);
  put(*log, 2, 0, 0, 1, 5000);
  EXPECT_EQ(log->producer_state().expire(6000, 4500), 1u);
  EXPECT_EQ(log->producer_state().find(1), nullptr);
  ASSERT_NE(log->producer_state().find(2), nullptr);
  // Forgotten: accepted again at whatever sequence it continues with.
  EXPECT_EQ(put(*log, 1, 0, 7, 1, 6000).error, ErrorCode::none);
}

TEST(ProducerSnapshot, EncodeDecodeRoundTrip) {
  std::unordered_map<int64_t, ProducerEntry> m;
  for (int64_t pid = 0; pid < 3; ++pid) {
    ProducerEntry e;
    e.producer_id = pid;
    for (int i = 0; i < 7; ++i) e.add(static_cast<int16_t>(pid), ProducerBatch{i * 2, i * 2 + 1, pid * 100 + i, pid * 100 + i, 1000 + i});
    m[pid] = e;
  }
  auto bytes = encode_producer_snapshot(m);
  auto back = decode_producer_snapshot(bytes);
  ASSERT_TRUE(back);
  ASSERT_EQ(back->size(), 3u);
  for (const auto& e : *back) {
    EXPECT_EQ(e, m.at(e.producer_id));
    EXPECT_EQ(e.batches.size(), kRetainedProducerBatches);
  }
  bytes[bytes.size() - 3] ^= std::byte{1};
  EXPECT_FALSE(decode_producer_snapshot(bytes));
}

TEST(ProducerSnapshot, CleanCloseAndReopenKeepsDeduplication) {
  TempDir dir;
  {
    auto log = Log::open(dir.path(), config(), true);
    for (int i = 0; i < 5; ++i) put(*log, 1, 0, i * 2, 2);
  }
  EXPECT_TRUE(fs::exists(dir.path() / "00000000000000000010.snapshot"));
  auto log = Log::open(dir.path(), config(), true);
  for (int i = 0; i < 5; ++i) {
    auto r = put(*log, 1, 0, i * 2, 2);
    EXPECT_TRUE(r.duplicate);
    EXPECT_EQ(r.base_offset, i * 2);
  }
  EXPECT_EQ(put(*log, 1, 0, 11, 1).error, ErrorCode::out_of_order_sequence_number);
  EXPECT_EQ(put(*log, 1, 0, 10, 1).base_offset, 10);
}

TEST(ProducerSnapshot, WrittenAtRoll) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 1, 0, 0, 3);
  log->roll(2000);
  EXPECT_TRUE(fs::exists(dir.path() / "00000000000000000003.snapshot"));
}

// A crash: the snapshot at the last roll, then the log after it, rebuild the same state.
TEST(ProducerSnapshot, RebuiltFromTheLogAfterACrash) {
  TempDir dir;
  std::unordered_map<int64_t, ProducerEntry> before;
  {
    auto log = Log::open(dir.path(), config(), true);
    put(*log, 1, 0, 0, 3);
    put(*log, 2, 5, 0, 1);
    log->roll(2000);  // snapshot at 4
    for (int i = 0; i < 6; ++i) put(*log, 1, 0, 3 + i, 1);
    put(*log, 3, 0, 0, 2);
    before = log->producer_state().producers();
    log->flush();
    // Simulated crash: no close(), so no snapshot at the log end.
    fs::path keep = dir.path() / "keep";
    fs::create_directories(keep);
    for (const auto& e : fs::directory_iterator(dir.path()))
      if (e.is_regular_file()) fs::copy_file(e.path(), keep / e.path().filename());
  }
  fs::path crashed = dir.path() / "keep";
  for (const auto& e : fs::directory_iterator(crashed)) {
    if (e.path().extension() == ".snapshot") {
      EXPECT_EQ(e.path().stem().string(), "00000000000000000004");
    }
  }
  auto log = Log::open(crashed, config(), false);
  EXPECT_EQ(log->producer_state().producers(), before);
  auto r = put(*log, 1, 0, 5, 1);
  EXPECT_TRUE(r.duplicate);
  EXPECT_EQ(r.base_offset, 6);
  EXPECT_EQ(put(*log, 1, 0, 9, 1).error, ErrorCode::none);
}

TEST(ProducerSnapshot, RebuiltFromTheWholeLogWithoutSnapshots) {
  TempDir dir;
  std::unordered_map<int64_t, ProducerEntry> before;
  {
    auto log = Log::open(dir.path(), config(), true);
    for (int i = 0; i < 8; ++i) put(*log, 4, 1, i, 1);
    before = log->producer_state().producers();
  }
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().extension() == ".snapshot") fs::remove(e.path());
  auto log = Log::open(dir.path(), config(), false);
  EXPECT_EQ(log->producer_state().producers(), before);
}

TEST(ProducerSnapshot, TruncationDropsLaterState) {
  TempDir dir;
  auto log = Log::open(dir.path(), config(), true);
  put(*log, 1, 0, 0, 2);
  log->roll(2000);  // snapshot at 2
  put(*log, 1, 0, 2, 2);
  put(*log, 1, 0, 4, 2);
  log->roll(3000);  // snapshot at 6
  put(*log, 1, 0, 6, 2);
  log->truncate_to(4);  // cuts inside the segment [2, 6)
  EXPECT_EQ(log->log_end_offset(), 4);
  EXPECT_FALSE(fs::exists(dir.path() / "00000000000000000006.snapshot"));
  // Snapshot at 2, then the batch [2, 3] from the log.
  EXPECT_EQ(log->producer_state().find(1)->last_seq(), 3);
  EXPECT_EQ(put(*log, 1, 0, 4, 2).base_offset, 4);
}

// Retention deletes segments, not state: a producer whose batches are all gone is still
// deduplicated and sequence-checked until it expires (Kafka's behaviour since KIP-360).
TEST(ProducerSnapshot, RetentionKeepsStateOfDeletedBatches) {
  TempDir dir;
  auto cfg = config();
  cfg.file_delete_delay_ms = 0;
  auto log = Log::open(dir.path(), cfg, true);
  put(*log, 1, 0, 0, 2);
  log->roll(2000);
  put(*log, 2, 0, 0, 2);
  log->roll(3000);
  ASSERT_EQ(log->delete_records_before(4, 4000), ErrorCode::none);
  log->enforce_retention(4000, log->log_end_offset());
  EXPECT_EQ(log->segment_count(), 1u);
  auto offsets = log->producer_state().snapshot_offsets();
  ASSERT_FALSE(offsets.empty());
  EXPECT_EQ(offsets.back(), 4);
  EXPECT_EQ(put(*log, 1, 0, 0, 2).duplicate, true);
  EXPECT_EQ(put(*log, 1, 0, 5, 1).error, ErrorCode::out_of_order_sequence_number);
  log.reset();
  auto reopened = Log::open(dir.path(), cfg, false);
  ASSERT_NE(reopened->producer_state().find(1), nullptr);
  EXPECT_EQ(reopened->producer_state().find(1)->last_seq(), 1);
}

}  // namespace
}  // namespace brokerd::storage
