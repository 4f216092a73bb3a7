// The log cleaner: latest value per key with offsets unchanged, tombstones and their delete
// horizon, codecs, compaction lags, dirty ratio, segment merging, and crashes mid-swap.
#include "brokerd/storage/cleaner.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>

#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/offset_map.h"
#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::TempDir;
namespace fs = std::filesystem;

constexpr int64_t kT0 = 1'700'000'000'000;  // the test clock starts here

struct Rec {
  int64_t offset;
  std::string key;
  std::optional<std::string> value;
};

struct KV {
  std::string key;
  std::optional<std::string> value;  // nullopt = tombstone
};

std::string str(std::span<const std::byte> s) { return std::string(reinterpret_cast<const char*>(s.data()), s.size()); }

Bytes make(const std::vector<KV>& kvs, int64_t ts, Compression c = Compression::none, int64_t pid = -1) {
  BatchOptions o;
  o.compression = c;
  if (pid >= 0) {
    o.producer_id = pid;
    o.producer_epoch = 0;
    o.base_sequence = 0;
  }
  BatchBuilder b(o);
  for (const auto& kv : kvs) {
    std::optional<std::span<const std::byte>> v;
    if (kv.value) v = as_bytes(*kv.value);
    b.add(ts, as_bytes(kv.key), v);
  }
  return b.build();
}

LogConfig compact_config(int64_t segment_bytes = 2048) {
  LogConfig c;
  c.segment_bytes = segment_bytes;
  c.cleanup_policy = {false, true};
  c.file_delete_delay_ms = 0;
  c.index_interval_bytes = 256;
  c.delete_retention_ms = 1000;
  return c;
}

// Every batch of the log, in order (whole bytes).
std::vector<Bytes> all_batches(const Log& log) {
  std::vector<Bytes> out;
  for (const Segment* s : log.segments()) {
    for (auto b = s->batch_at(0); b; b = s->batch_at(b->position + b->size)) {
      Bytes buf(b->size);
      EXPECT_TRUE(s->read_bytes(b->position, buf));
      out.push_back(std::move(buf));
    }
  }
  return out;
}

std::vector<Rec> all_records(const Log& log) {
  std::vector<Rec> out;
  for (const auto& buf : all_batches(log)) {
    RecordBatchView v(buf);
    EXPECT_TRUE(v.crc_valid());
    RecordReader r(v);
    Record rec;
    while (r.next(rec)) {
      out.push_back(Rec{rec.offset, rec.key ? str(*rec.key) : "", rec.value ? std::optional(str(*rec.value)) : std::nullopt});
    }
    EXPECT_EQ(r.error(), ErrorCode::none);
  }
  return out;
}

// Writes `keys` x `versions` (every 7th key's last version a tombstone) in batches of
// `per_batch`, returns the latest record of each key.
std::map<std::string, Rec> fill(Log& log, int keys, int versions, int per_batch, int64_t ts,
                                Compression c = Compression::none, bool tombstones = true) {
  std::map<std::string, Rec> latest;
  std::vector<KV> pending;
  auto flush = [&] {
    if (pending.empty()) return;
    Bytes b = make(pending, ts, c);
    auto res = log.append(b, 0, ts);
    EXPECT_EQ(res.error, ErrorCode::none) << res.message;
    for (size_t i = 0; i < pending.size(); ++i) {
      latest[pending[i].key] = Rec{res.base_offset + static_cast<int64_t>(i), pending[i].key, pending[i].value};
    }
    pending.clear();
  };
  for (int v = 0; v < versions; ++v) {
    for (int k = 0; k < keys; ++k) {
      KV kv{"key-" + std::to_string(k), "value-" + std::to_string(k) + "-v" + std::to_string(v) + std::string(20, 'x')};
      if (tombstones && v == versions - 1 && k % 7 == 0) kv.value.reset();
      pending.push_back(kv);
      if (static_cast<int>(pending.size()) == per_batch) flush();
    }
  }
  flush();
  return latest;
}

// Below the active segment every key appears once, as its latest record; offsets increase
// through the whole log; every key's latest record is still the expected one.
void expect_compacted(const Log& log, const std::map<std::string, Rec>& latest, bool tombstones_gone) {
  auto recs = all_records(log);
  int64_t active_base = log.segments().back()->base_offset();
  std::map<std::string, int> seen_below;
  std::map<std::string, Rec> last;
  int64_t prev = -1;
  for (const auto& r : recs) {
    EXPECT_GT(r.offset, prev);
    prev = r.offset;
    if (r.offset < active_base) ++seen_below[r.key];
    last[r.key] = r;
  }
  for (const auto& [k, n] : seen_below) EXPECT_EQ(n, 1) << k;
  for (const auto& [k, want] : latest) {
    if (!want.value && tombstones_gone) {
      EXPECT_FALSE(last.contains(k)) << k;
      continue;
    }
    ASSERT_TRUE(last.contains(k)) << k;
    EXPECT_EQ(last[k].offset, want.offset) << k;
    EXPECT_EQ(last[k].value, want.value) << k;
  }
}

TEST(OffsetMap, KeepsLatestOffsetAndCountsKeys) {
  OffsetMap m(1 << 16);
  for (int i = 0; i < 1000; ++i) m.put(as_bytes("k" + std::to_string(i % 100)), i);
  EXPECT_EQ(m.size(), 100u);
  EXPECT_EQ(m.get(as_bytes("k7")), 907);
  EXPECT_EQ(m.get(as_bytes("absent")), -1);
  EXPECT_EQ(m.latest_offset(), 999);
  EXPECT_NE(hash_key(as_bytes("a")), hash_key(as_bytes("b")));
  EXPECT_NE(hash_key(as_bytes("")), hash_key(as_bytes(std::string(1, '\0'))));
}

TEST(Cleaner, KeepsLatestPerKeyWithOffsetsUnchanged) {
  TempDir dir;
  auto log = Log::open(dir.path(), compact_config(), true);
  auto latest = fill(*log, 60, 8, 5, kT0);
  log->roll(kT0);
  size_t before = log->segment_count();
  ASSERT_GT(before, 10u);
  CleanerCheckpoint cp;
  auto stats = clean_log_now(*log, cp, kT0 + 10);
  ASSERT_TRUE(stats);
  EXPECT_LT(stats->bytes_written, stats->bytes_read / 3);
  EXPECT_EQ(cp.first_dirty_offset, log->log_end_offset());
  EXPECT_EQ(cp.next_horizon_ms, kT0 + 10 + 1000);
  EXPECT_LE(log->segment_count(), before);
  expect_compacted(*log, latest, false);
  // Groups are formed from the sizes before cleaning (as Kafka does): the next pass merges
  // the now small segments.
  ASSERT_TRUE(clean_log_now(*log, cp, kT0 + 10, {}, true));
  EXPECT_LT(log->segment_count(), before / 2);
  expect_compacted(*log, latest, false);
  // The batches holding tombstones carry the delete horizon.
  int with_horizon = 0;
  for (const auto& b : all_batches(*log)) {
    RecordBatchView v(b);
    if (v.attributes() & batch_attr::delete_horizon) {
      ++with_horizon;
      EXPECT_EQ(v.base_timestamp(), kT0 + 10 + 1000);
    }
  }
  EXPECT_GT(with_horizon, 0);
  // Record timestamps survive the new base timestamp.
  for (const auto& b : all_batches(*log)) {
    RecordReader r{RecordBatchView(b)};
    Record rec;
    while (r.next(rec)) EXPECT_EQ(rec.timestamp, kT0);
  }
  // The cleaned log reopens (after a crash too: recovery accepts the offset gaps).
  log.reset();
  log = Log::open(dir.path(), compact_config(), false);
  expect_compacted(*log, latest, false);
}

TEST(Cleaner, TombstonesLiveForDeleteRetentionAfterCleaning) {
  TempDir dir;
  auto log = Log::open(dir.path(), compact_config(), true);
  auto latest = fill(*log, 30, 4, 3, kT0);
  log->roll(kT0);
  CleanerCheckpoint cp;
  ASSERT_TRUE(clean_log_now(*log, cp, kT0 + 100));
  expect_compacted(*log, latest, false);
  // Nothing dirty and the horizon not reached: no pass.
  EXPECT_FALSE(clean_log_now(*log, cp, kT0 + 100 + 999));
  expect_compacted(*log, latest, false);
  // Past the horizon: the tombstones go, and with them their keys.
  auto stats = clean_log_now(*log, cp, kT0 + 100 + 1000);
  ASSERT_TRUE(stats);
  EXPECT_EQ(stats->tombstones_removed, 5);  // keys 0, 7, 14, 21, 28
  EXPECT_EQ(cp.next_horizon_ms, -1);
  expect_compacted(*log, latest, true);
}

TEST(Cleaner, CompressedBatchesKeepTheirCodec) {
  for (Compression c : {Compression::gzip, Compression::snappy, Compression::lz4, Compression::zstd}) {
    SCOPED_TRACE(std::string(compression_name(c)));
    TempDir dir;
    auto log = Log::open(dir.path(), compact_config(4096), true);
    auto latest = fill(*log, 40, 5, 12, kT0, c);
    log->roll(kT0);
    CleanerCheckpoint cp;
    auto stats = clean_log_now(*log, cp, kT0);
    ASSERT_TRUE(stats);
    EXPECT_GT(stats->batches_rewritten, 0);
    expect_compacted(*log, latest, false);
    BatchLimits stored;
    stored.stored = true;
    for (const auto& b : all_batches(*log)) {
      RecordBatchView v(b);
      EXPECT_EQ(v.compression(), c);
      EXPECT_TRUE(validate_batch(b, stored).ok());
    }
  }
}

TEST(Cleaner, MinCompactionLagKeepsRecentSegmentsDirty) {
  TempDir dir;
  auto cfg = compact_config();
  cfg.min_compaction_lag_ms = 60000;
  auto log = Log::open(dir.path(), cfg, true);
  fill(*log, 20, 5, 5, kT0, Compression::none, false);      // old
  auto latest = fill(*log, 20, 5, 5, kT0 + 50000, Compression::none, false);  // recent
  log->roll(kT0 + 50000);
  CleanerCheckpoint cp;
  auto in = snapshot_for_cleaning(*log, cp, log->log_end_offset());
  auto range = assess(in, kT0 + 60001);
  EXPECT_GT(range.first_uncleanable, range.first_dirty);
  EXPECT_LT(range.first_uncleanable, log->log_end_offset());
  ASSERT_TRUE(clean_log_now(*log, cp, kT0 + 60001));
  EXPECT_EQ(cp.first_dirty_offset, range.first_uncleanable);
  // Records at and above the first uncleanable offset were left as written.
  int64_t above = 0;
  for (const auto& r : all_records(*log)) above += r.offset >= range.first_uncleanable;
  EXPECT_EQ(above, log->log_end_offset() - range.first_uncleanable);
  // Once the lag has passed for everything, the rest is compacted.
  ASSERT_TRUE(clean_log_now(*log, cp, kT0 + 200000));
  expect_compacted(*log, latest, false);
  // Everything too young: nothing is cleanable.
  TempDir dir2;
  auto young = Log::open(dir2.path(), cfg, true);
  fill(*young, 20, 5, 5, kT0);
  young->roll(kT0);
  CleanerCheckpoint cp2;
  EXPECT_FALSE(clean_log_now(*young, cp2, kT0 + 1000));
}

// A key's committed value outlives a newer, uncommitted one: the new leader after a failover
// may never have had the newer record, and then the older one is all that remains.
TEST(Cleaner, NothingAtOrAboveTheHighWatermarkIsCleanedOrShadowsAnOlderRecord) {
  TempDir dir;
  auto cfg = compact_config(1024);
  cfg.min_cleanable_dirty_ratio = 0.01;
  auto log = Log::open(dir.path(), cfg, true);
  auto put = [&](const std::string& k, const std::string& v) {
    Bytes b = make({{k, v}}, kT0);
    return log->append(b, 0, kT0).error;
  };
  ASSERT_EQ(put("K", "v1"), ErrorCode::none);  // offset 0, committed
  const int64_t hw = log->log_end_offset();
  ASSERT_EQ(put("W", "w"), ErrorCode::none);
  ASSERT_EQ(put("K", "v2"), ErrorCode::none);
  ASSERT_EQ(put("L", std::string(1500, 'x')), ErrorCode::none);
  ASSERT_EQ(put("M", "m"), ErrorCode::none);
  log->roll(kT0);
  CleanerCheckpoint cp;
  auto in = snapshot_for_cleaning(*log, cp, hw);
  auto range = assess(in, kT0);
  EXPECT_LE(range.first_uncleanable, hw);
  if (range.should_clean) {
    auto res = clean(in, range, kT0);
    ASSERT_TRUE(res.error.empty()) << res.error;
    ASSERT_TRUE(install(*log, res, kT0));
    EXPECT_LE(res.next_checkpoint.first_dirty_offset, hw);
    cp = res.next_checkpoint;
  }
  auto recs = all_records(*log);
  ASSERT_EQ(recs.size(), 5u);
  EXPECT_EQ(recs[0].offset, 0);
  EXPECT_EQ(recs[0].value, "v1");
  // Once everything is committed, K=v1 goes.
  ASSERT_TRUE(clean_log_now(*log, cp, kT0));
  recs = all_records(*log);
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0].offset, 1);
}

// A follower (or a mirror) copies the leader's cleaned batches as they are: records removed
// from a batch leave gaps in its offset deltas, and its lastOffsetDelta stays.
TEST(Cleaner, CleanedBatchesReplicateAsTheyAre) {
  TempDir dir;
  auto log = Log::open(dir.path() / "leader", compact_config(), true);
  auto latest = fill(*log, 20, 4, 7, kT0, Compression::none, false);  // batches across versions
  log->roll(kT0);
  CleanerCheckpoint cp;
  ASSERT_TRUE(clean_log_now(*log, cp, kT0));
  auto follower = Log::open(dir.path() / "follower", compact_config(), true);
  size_t gapped = 0;
  for (const auto& b : all_batches(*log)) {
    RecordBatchView v(b);
    gapped += v.last_offset_delta() != v.records_count() - 1;
    auto res = follower->append_replica(b, kT0);
    ASSERT_EQ(res.error, ErrorCode::none) << res.message << " at offset " << v.base_offset();
  }
  EXPECT_GT(gapped, 0u);
  EXPECT_EQ(follower->log_end_offset(), log->log_end_offset());
  expect_compacted(*follower, latest, false);
}

TEST(Cleaner, DirtyRatioDecides) {
  TempDir dir;
  auto cfg = compact_config(4096);
  cfg.min_cleanable_dirty_ratio = 0.5;
  auto log = Log::open(dir.path(), cfg, true);
  fill(*log, 200, 1, 10, kT0, Compression::none, false);  // unique keys: nothing to remove
  log->roll(kT0);
  CleanerCheckpoint cp;
  ASSERT_TRUE(clean_log_now(*log, cp, kT0));
  // A little dirty data: below the ratio.
  fill(*log, 20, 1, 10, kT0, Compression::none, false);
  log->roll(kT0);
  auto range = assess(snapshot_for_cleaning(*log, cp, log->log_end_offset()), kT0);
  EXPECT_GT(range.dirty_bytes, 0u);
  EXPECT_LT(range.dirty_ratio, 0.5);
  EXPECT_FALSE(clean_log_now(*log, cp, kT0));
  // max.compaction.lag.ms overrides the ratio for old dirty records.
  auto lagged = cfg;
  lagged.max_compaction_lag_ms = 1000;
  log->update_config(lagged);
  EXPECT_TRUE(assess(snapshot_for_cleaning(*log, cp, log->log_end_offset()), kT0 + 5000).max_lag_exceeded);
  log->update_config(cfg);
  // Enough dirty data: above it.
  auto latest = fill(*log, 200, 2, 10, kT0, Compression::none, false);
  log->roll(kT0);
  range = assess(snapshot_for_cleaning(*log, cp, log->log_end_offset()), kT0);
  EXPECT_GT(range.dirty_ratio, 0.5);
  ASSERT_TRUE(clean_log_now(*log, cp, kT0));
  expect_compacted(*log, latest, false);
}

TEST(Cleaner, MergesSmallCleanedSegments) {
  TempDir dir;
  auto cfg = compact_config(4096);
  auto log = Log::open(dir.path(), cfg, true);
  auto latest = fill(*log, 5, 200, 5, kT0, Compression::none, false);
  log->roll(kT0);
  ASSERT_GT(log->segment_count(), 10u);
  CleanerCheckpoint cp;
  ASSERT_TRUE(clean_log_now(*log, cp, kT0));
  ASSERT_TRUE(clean_log_now(*log, cp, kT0, {}, true));
  EXPECT_EQ(log->segment_count(), 2u);  // one cleaned segment and the active one
  for (const Segment* s : log->segments()) EXPECT_LE(s->size(), static_cast<uint64_t>(cfg.segment_bytes));
  expect_compacted(*log, latest, false);
  // Reads through the merged segment's index find every kept record.
  for (const auto& [k, r] : latest) {
    auto res = log->read(r.offset, 1 << 20, true, INT64_MAX);
    ASSERT_EQ(res.error, ErrorCode::none);
    auto bytes = testing::read_all(res.records);
    ASSERT_FALSE(bytes.empty());
    RecordBatchView v(bytes);
    EXPECT_LE(v.base_offset(), r.offset);
    EXPECT_GE(v.last_offset(), r.offset);
  }
}

TEST(Cleaner, KeepsAnIdempotentProducersLastBatchEvenWhenEmpty) {
  TempDir dir;
  auto log = Log::open(dir.path(), compact_config(), true);
  Bytes a = make({{"k", "from-producer"}}, kT0, Compression::none, 7);
  auto ra = log->append(a, 0, kT0);
  ASSERT_EQ(ra.error, ErrorCode::none) << ra.message;
  Bytes b = make({{"k", "newer"}}, kT0);
  ASSERT_EQ(log->append(b, 0, kT0).error, ErrorCode::none);
  log->roll(kT0);
  CleanerCheckpoint cp;
  ASSERT_TRUE(clean_log_now(*log, cp, kT0, {}, true));
  auto batches = all_batches(*log);
  ASSERT_EQ(batches.size(), 2u);
  RecordBatchView empty(batches[0]);
  EXPECT_EQ(empty.records_count(), 0);
  EXPECT_EQ(empty.producer_id(), 7);
  EXPECT_EQ(empty.base_offset(), ra.base_offset);
  EXPECT_EQ(empty.last_offset(), ra.last_offset);
  EXPECT_TRUE(empty.crc_valid());
  log.reset();
  log = Log::open(dir.path(), compact_config(), false);  // recovery keeps the empty batch
  EXPECT_EQ(all_batches(*log).size(), 2u);
}

Bytes txn(const std::vector<KV>& kvs, int64_t ts, int64_t pid, int32_t seq) {
  BatchOptions o;
  o.producer_id = pid;
  o.producer_epoch = 0;
  o.base_sequence = seq;
  o.transactional = true;
  BatchBuilder b(o);
  for (const auto& kv : kvs) b.add(ts, as_bytes(kv.key), as_bytes(*kv.value));
  return b.build();
}

// Kafka's rules: an aborted transaction's records go (and never shadow an older value of
// their key), markers stay, and nothing at or past an ongoing transaction is cleaned.
TEST(Cleaner, RemovesAbortedTransactionsAndStopsAtTheFirstUnstableOffset) {
  TempDir dir;
  auto log = Log::open(dir.path(), compact_config(1 << 20), true);
  Bytes a = make({{"k", "committed"}}, kT0);
  ASSERT_EQ(log->append(a, 0, kT0).error, ErrorCode::none);  // 0
  Bytes t1 = txn({{"k", "aborted"}, {"j", "aborted"}}, kT0, 7, 0);
  ASSERT_EQ(log->append(t1, 0, kT0, AppendOrigin::client, TxnAppendMode::unverified()).error, ErrorCode::none);  // 1-2
  ASSERT_EQ(log->append_marker(TxnMarker{7, 0, 0, ControlType::abort}, 0, kT0).error, ErrorCode::none);  // 3
  Bytes t2 = txn({{"m", "open"}}, kT0, 8, 0);
  ASSERT_EQ(log->append(t2, 0, kT0, AppendOrigin::client, TxnAppendMode::unverified()).error, ErrorCode::none);  // 4
  Bytes b = make({{"m", "later"}}, kT0);
  ASSERT_EQ(log->append(b, 0, kT0).error, ErrorCode::none);  // 5: past the first unstable offset
  log->roll(kT0);
  CleanerCheckpoint cp;
  ASSERT_TRUE(clean_log_now(*log, cp, kT0, {}, true));
  EXPECT_EQ(cp.first_dirty_offset, 4);
  auto recs = all_records(*log);
  std::vector<int64_t> offsets;
  for (const auto& r : recs) offsets.push_back(r.offset);
  // 0 stays (the aborted "k" does not shadow it), 1-2 go, the marker (3) stays, 4 and 5 are
  // beyond the first unstable offset and untouched.
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 3, 4, 5}));
  auto batches = all_batches(*log);
  bool marker_kept = false;
  for (const auto& bb : batches) marker_kept = marker_kept || RecordBatchView(bb).is_control();
  EXPECT_TRUE(marker_kept);
  // The aborted transaction is still indexed for the cleaned segment.
  EXPECT_EQ(log->aborted_transactions(0, 10).size(), 1u);
}

// Kafka's rule for markers: one goes once no data of its transaction is left before it,
// after delete.retention.ms (a first pass sets its delete horizon, a pass after it drops it).
TEST(Cleaner, MarkersGoAfterDeleteRetentionOnceTheirTransactionKeptNoData) {
  TempDir dir;
  auto log = Log::open(dir.path(), compact_config(1 << 20), true);
  auto txn_append = [&](Bytes b) {
    return log->append(b, 0, kT0, AppendOrigin::client, TxnAppendMode::unverified()).error;
  };
  ASSERT_EQ(txn_append(txn({{"k", "aborted"}}, kT0, 7, 0)), ErrorCode::none);                      // 0
  ASSERT_EQ(log->append_marker(TxnMarker{7, 0, 0, ControlType::abort}, 0, kT0).error, ErrorCode::none);   // 1
  Bytes plain;
  {
    BatchOptions o;
    o.producer_id = 7;
    o.producer_epoch = 0;
    o.base_sequence = 1;
    BatchBuilder bb(o);
    bb.add(kT0, as_bytes("k"), as_bytes("x"));
    plain = bb.build();
  }
  ASSERT_EQ(log->append(plain, 0, kT0).error, ErrorCode::none);                                     // 2
  ASSERT_EQ(txn_append(txn({{"m", "committed"}}, kT0, 8, 0)), ErrorCode::none);                    // 3
  ASSERT_EQ(log->append_marker(TxnMarker{8, 0, 0, ControlType::commit}, 0, kT0).error, ErrorCode::none);  // 4
  Bytes z = make({{"z", "1"}}, kT0);
  ASSERT_EQ(log->append(z, 0, kT0).error, ErrorCode::none);                                         // 5
  log->roll(kT0);
  auto offsets = [&] {
    std::vector<int64_t> out;
    for (const auto& r : all_records(*log)) out.push_back(r.offset);
    return out;
  };
  CleanerCheckpoint cp;
  ASSERT_TRUE(clean_log_now(*log, cp, kT0, {}, true));
  EXPECT_EQ(offsets(), (std::vector<int64_t>{1, 2, 3, 4, 5}));  // the abort marker waits for its horizon
  ASSERT_TRUE(clean_log_now(*log, cp, kT0 + 1001, {}, true));
  EXPECT_EQ(offsets(), (std::vector<int64_t>{2, 3, 4, 5}));  // the commit marker stays: its data does
}

TEST(Cleaner, CompactedLogRefusesRecordsWithoutKey) {
  TempDir dir;
  auto log = Log::open(dir.path(), compact_config(), true);
  BatchBuilder bb;
  bb.add(kT0, std::nullopt, as_bytes("no key"));
  Bytes b = bb.build();
  auto res = log->append(b, 0, kT0);
  EXPECT_EQ(res.error, ErrorCode::invalid_record);
  ASSERT_EQ(res.record_errors.size(), 1u);
  EXPECT_EQ(res.record_errors[0].index, 0);
  EXPECT_EQ(res.record_errors[0].message, "Compacted topic cannot accept message without key in topic partition " +
                                              dir.path().filename().string() + ".");
  EXPECT_EQ(log->log_end_offset(), 0);
  auto cfg = compact_config();
  cfg.cleanup_policy = {true, false};
  log->update_config(cfg);
  Bytes b2 = bb.build();
  EXPECT_EQ(log->append(b2, 0, kT0).error, ErrorCode::none);
}

// A crash at each point of the swap: the log reopens to the old or the new segments, with
// every key's latest value.
TEST(Cleaner, CrashDuringSwapRecovers) {
  enum Stop { after_cleaned, index_swapped_only, after_step1, after_step2, completed };
  for (int stop : {after_cleaned, index_swapped_only, after_step1, after_step2, completed}) {
    SCOPED_TRACE("stop " + std::to_string(stop));
    TempDir dir;
    auto log = Log::open(dir.path(), compact_config(), true);
    auto latest = fill(*log, 40, 6, 4, kT0);
    log->roll(kT0);
    auto more = fill(*log, 5, 1, 5, kT0);  // the active segment has data too
    for (auto& [k, r] : more) latest[k] = r;
    CleanerCheckpoint cp;
    auto in = snapshot_for_cleaning(*log, cp, log->log_end_offset());
    auto range = assess(in, kT0);
    auto res = clean(in, range, kT0);
    ASSERT_TRUE(res.error.empty()) << res.error;
    ASSERT_FALSE(res.groups.empty());
    const auto& group = res.groups.front();
    auto stem = (dir.path() / segment_file_stem(group.replaced.front().base_offset)).string();
    switch (stop) {
      case after_cleaned: break;
      case index_swapped_only:
        fs::rename(stem + ".index.cleaned", stem + ".index.swap");
        fs::rename(stem + ".timeindex.cleaned", stem + ".timeindex.swap");
        break;
      case after_step1: ASSERT_TRUE(log->replace_segments(group.replaced, kT0, 1)); break;
      case after_step2: ASSERT_TRUE(log->replace_segments(group.replaced, kT0, 2)); break;
      case completed: ASSERT_TRUE(install(*log, res, kT0)); break;
    }
    log.reset();  // the process dies; no clean-shutdown marker
    log = Log::open(dir.path(), compact_config(), false);
    for (const auto& e : fs::directory_iterator(dir.path())) {
      auto name = e.path().filename().string();
      EXPECT_FALSE(name.ends_with(".cleaned") || name.ends_with(".swap")) << name;
    }
    EXPECT_EQ(log->log_end_offset(), latest.rbegin()->second.offset >= 0 ? log->log_end_offset() : 0);
    // Every key's latest value, offsets increasing, nothing duplicated past the swap.
    auto recs = all_records(*log);
    std::map<std::string, Rec> last;
    int64_t prev = -1;
    for (const auto& r : recs) {
      EXPECT_GT(r.offset, prev);
      prev = r.offset;
      last[r.key] = r;
    }
    for (const auto& [k, want] : latest) {
      ASSERT_TRUE(last.contains(k)) << k;
      EXPECT_EQ(last[k].offset, want.offset) << k;
      EXPECT_EQ(last[k].value, want.value) << k;
    }
    bool swapped = stop >= after_step1;
    if (swapped) {
      // The first group is the cleaned one: each key once in it.
      std::map<std::string, int> n;
      for (const auto& r : recs) {
        if (r.offset < group.replaced.back().next_offset) ++n[r.key];
      }
      for (const auto& [k, c] : n) EXPECT_EQ(c, 1) << k;
    } else {
      EXPECT_EQ(static_cast<int64_t>(recs.size()), log->log_end_offset());  // untouched
    }
    // A later pass over the recovered log still works.
    CleanerCheckpoint cp2;
    clean_log_now(*log, cp2, kT0, {}, true);
    expect_compacted(*log, latest, false);
  }
}

// The last segment of a merged group loses every record in cleaning, so the swap's batches
// end before it: a crash at each step of the swap must still not bring it back.
TEST(Cleaner, CrashDuringSwapWhenTheLastReplacedSegmentWasEmptied) {
  for (int step : {1, 2, 3}) {
    SCOPED_TRACE("crash after step " + std::to_string(step));
    TempDir dir;
    auto log = Log::open(dir.path(), compact_config(), true);
    auto put = [&](const std::vector<KV>& kvs) {
      Bytes b = make(kvs, kT0);
      ASSERT_EQ(log->append(b, 0, kT0).error, ErrorCode::none);
      log->roll(kT0);
    };
    std::vector<KV> a, b_old, b_new_and_c;
    for (int i = 0; i < 4; ++i) a.push_back({"a" + std::to_string(i), std::string(60, 'a')});
    for (int i = 0; i < 4; ++i) b_old.push_back({"b" + std::to_string(i), "old"});
    for (int i = 0; i < 4; ++i) b_new_and_c.push_back({"b" + std::to_string(i), "new"});
    for (int i = 0; i < 12; ++i) b_new_and_c.push_back({"c" + std::to_string(i), std::string(120, 'c')});
    put(a);            // segment 1: kept whole
    put(b_old);        // segment 2: every record superseded below
    put(b_new_and_c);  // segment 3: too large to merge with 1 and 2
    Bytes active = make({{"z", "active"}}, kT0);
    ASSERT_EQ(log->append(active, 0, kT0).error, ErrorCode::none);
    const auto segs = log->segments();
    ASSERT_EQ(segs.size(), 4u);
    const int64_t old_first = segs[1]->base_offset(), old_end = segs[1]->next_offset();

    CleanerCheckpoint cp;
    auto in = snapshot_for_cleaning(*log, cp, log->log_end_offset());
    auto res = clean(in, assess(in, kT0), kT0);
    ASSERT_TRUE(res.error.empty()) << res.error;
    ASSERT_GE(res.groups.size(), 1u);
    const auto& group = res.groups.front();
    ASSERT_EQ(group.replaced.size(), 2u);  // segments 1 and 2 merged
    if (step < 3) {
      ASSERT_TRUE(log->replace_segments(group.replaced, kT0, step));
    } else {
      ASSERT_TRUE(install(*log, res, kT0));
    }
    log.reset();  // the process dies
    log = Log::open(dir.path(), compact_config(), false);
    for (const auto& r : all_records(*log)) {
      EXPECT_FALSE(r.offset >= old_first && r.offset < old_end)
          << "superseded record " << r.key << "=" << r.value.value_or("") << " at " << r.offset << " came back";
    }
    for (const auto& e : fs::directory_iterator(dir.path()))
      EXPECT_FALSE(e.path().filename().string().ends_with(".swap-end")) << e.path();
  }
}

TEST(Cleaner, SmallDedupeBufferCleansInSeveralPasses) {
  TempDir dir;
  auto cfg = compact_config();
  cfg.min_cleanable_dirty_ratio = 0;
  auto log = Log::open(dir.path(), cfg, true);
  auto latest = fill(*log, 2000, 3, 50, kT0, Compression::none, false);
  log->roll(kT0);
  CleanerCheckpoint cp;
  CleanerOptions small;
  small.dedupe_buffer_bytes = 64 * 1024;  // ~2,700 keys a pass
  int passes = 0;
  while (passes < 20 && clean_log_now(*log, cp, kT0, small)) ++passes;
  EXPECT_GT(passes, 1);
  EXPECT_EQ(cp.first_dirty_offset, log->log_end_offset());
  ASSERT_TRUE(clean_log_now(*log, cp, kT0, small, true));  // a pass over clean data changes nothing
  expect_compacted(*log, latest, false);
}

}  // namespace
}  // namespace brokerd::storage
