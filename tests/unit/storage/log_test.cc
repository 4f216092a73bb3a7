#include "brokerd/storage/log.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>

#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::batch_bases;
using testing::make_batch;
using testing::read_all;
using testing::TempDir;
using testing::append;
using testing::kNow;
using testing::small_config;

TEST(Log, AppendAssignsOffsetsAndReadsBack) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", LogConfig{}, true);
  auto r1 = append(*log, 3);
  ASSERT_EQ(r1.error, ErrorCode::none);
  EXPECT_EQ(r1.base_offset, 0);
  EXPECT_EQ(r1.last_offset, 2);
  EXPECT_EQ(r1.log_append_time, -1);
  auto r2 = append(*log, 2);
  EXPECT_EQ(r2.base_offset, 3);
  EXPECT_EQ(r2.last_offset, 4);
  EXPECT_EQ(log->log_end_offset(), 5);

  auto rr = log->read(0, 1 << 20, true, INT64_MAX);
  ASSERT_EQ(rr.error, ErrorCode::none);
  Bytes got = read_all(rr.records);
  EXPECT_EQ(batch_bases(got), (std::vector<int64_t>{0, 3}));
  RecordBatchView v(got);
  EXPECT_TRUE(v.crc_valid());
  EXPECT_EQ(v.partition_leader_epoch(), 5);
  EXPECT_EQ(log->size_bytes(), got.size());
}

TEST(Log, MultipleBatchesInOneAppend) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", LogConfig{}, true);
  Bytes a = make_batch(2), b = make_batch(3);
  a.insert(a.end(), b.begin(), b.end());
  // A client's partition data is one batch; the node's own writers may append several.
  EXPECT_EQ(log->append(a, 0, kNow, AppendOrigin::client).error, ErrorCode::invalid_record);
  EXPECT_EQ(log->log_end_offset(), 0);
  auto r = log->append(a, 0, kNow, AppendOrigin::internal);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.base_offset, 0);
  EXPECT_EQ(r.last_offset, 4);
  EXPECT_EQ(batch_bases(read_all(log->read(0, 1 << 20, true, INT64_MAX).records)), (std::vector<int64_t>{0, 2}));
}

TEST(Log, RejectsInvalidBatchWithoutWriting) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", LogConfig{}, true);
  Bytes b = make_batch(2);
  b[b.size() - 1] ^= std::byte{1};
  EXPECT_EQ(log->append(b, 0, kNow).error, ErrorCode::corrupt_message);
  EXPECT_EQ(log->log_end_offset(), 0);
  EXPECT_EQ(log->size_bytes(), 0u);
}

TEST(Log, RollsBySize) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", small_config(), true);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);  // ~700 bytes each
  EXPECT_GT(log->segment_count(), 3u);
  for (const Segment* s : log->segments()) EXPECT_LE(s->size(), 4096u);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "t-0" / "00000000000000000000.log"));
  // Every offset stays readable across segment boundaries.
  for (int64_t off = 0; off < 100; off += 7) {
    auto r = log->read(off, 1, true, INT64_MAX);
    auto bases = batch_bases(read_all(r.records));
    ASSERT_EQ(bases.size(), 1u) << off;
    EXPECT_LE(bases[0], off);
    EXPECT_GT(bases[0] + 5, off);
  }
  // A large read crosses segments and returns everything in order.
  auto all = batch_bases(read_all(log->read(0, 1 << 20, true, INT64_MAX).records));
  ASSERT_EQ(all.size(), 20u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(all[i], i * 5);
}

TEST(Log, RollsByTime) {
  TempDir dir;
  LogConfig c;
  c.segment_ms = 1000;
  auto log = Log::open(dir.path() / "t-0", c, true);
  ASSERT_EQ(append(*log, 1, 10, 5000).error, ErrorCode::none);
  ASSERT_EQ(append(*log, 1, 10, 5500).error, ErrorCode::none);
  EXPECT_EQ(log->segment_count(), 1u);
  ASSERT_EQ(append(*log, 1, 10, 6001).error, ErrorCode::none);  // 1001 ms after the first batch
  EXPECT_EQ(log->segment_count(), 2u);
  EXPECT_EQ(log->segments().back()->base_offset(), 2);
}

TEST(Log, ReadSemantics) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", LogConfig{}, true);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(append(*log, 10, 200).error, ErrorCode::none);  // offsets 0-39
  size_t batch_size = make_batch(10, 200).size();

  // First batch larger than max_bytes: whole batch when min_one_batch, nothing otherwise.
  auto r = log->read(0, 10, true, INT64_MAX);
  EXPECT_EQ(r.records.size(), batch_size);
  EXPECT_EQ(log->read(0, 10, false, INT64_MAX).records.size(), 0u);
  // Never splits a batch: 1.5 batches of room -> one batch.
  EXPECT_EQ(log->read(0, static_cast<int32_t>(batch_size * 3 / 2), true, INT64_MAX).records.size(), batch_size);
  // Offset inside a batch starts at that batch.
  EXPECT_EQ(batch_bases(read_all(log->read(15, 1 << 20, true, INT64_MAX).records)),
            (std::vector<int64_t>{10, 20, 30}));
  // The high watermark cuts before the batch at 30.
  EXPECT_EQ(batch_bases(read_all(log->read(0, 1 << 20, true, 30).records)), (std::vector<int64_t>{0, 10, 20}));
  EXPECT_EQ(log->read(30, 1 << 20, true, 30).records.size(), 0u);
  // At log end: empty, no error; beyond: out of range.
  auto end = log->read(40, 1 << 20, true, INT64_MAX);
  EXPECT_EQ(end.error, ErrorCode::none);
  EXPECT_FALSE(end.records.is_null);
  EXPECT_EQ(end.records.size(), 0u);
  EXPECT_EQ(log->read(41, 1 << 20, true, INT64_MAX).error, ErrorCode::offset_out_of_range);
  EXPECT_EQ(log->read(-1, 1 << 20, true, INT64_MAX).error, ErrorCode::offset_out_of_range);
}

TEST(Log, LogAppendTimeRewritesBatch) {
  TempDir dir;
  LogConfig c;
  c.message_timestamp_type = TimestampType::log_append_time;
  auto log = Log::open(dir.path() / "t-0", c, true);
  auto r = append(*log, 3, 50, 1000, kNow);
  EXPECT_EQ(r.log_append_time, kNow);
  Bytes got = read_all(log->read(0, 1 << 20, true, INT64_MAX).records);
  RecordBatchView v(got);
  EXPECT_TRUE(v.crc_valid());
  EXPECT_EQ(v.timestamp_type(), TimestampType::log_append_time);
  EXPECT_EQ(v.max_timestamp(), kNow);
  RecordReader reader(v);
  Record rec;
  int n = 0;
  while (reader.next(rec)) {
    EXPECT_EQ(rec.timestamp, kNow);
    ++n;
  }
  EXPECT_EQ(n, 3);
}

TEST(Log, OffsetForTimestampFindsExactRecord) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", small_config(), true);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(append(*log, 10, 50, 1000 + i * 10).error, ErrorCode::none);
  // Batch i holds offsets 10i..10i+9 with timestamps 1000+10i .. 1000+10i+9.
  auto hit = log->offset_for_timestamp(1000 + 55);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->timestamp, 1055);
  EXPECT_EQ(hit->offset, 10 * 5 + 5);
  auto first = log->offset_for_timestamp(0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->offset, 0);
  EXPECT_FALSE(log->offset_for_timestamp(1000 + 29 * 10 + 10));
  auto mx = log->max_timestamp_and_offset();
  ASSERT_TRUE(mx);
  EXPECT_EQ(mx->timestamp, 1000 + 290 + 9);
  EXPECT_EQ(mx->offset, 299);
}

TEST(Log, RetentionByTimeDeletesOldSegmentsAndRollsExpiredActive) {
  TempDir dir;
  LogConfig c = small_config();
  c.retention_ms = 10'000;
  auto log = Log::open(dir.path() / "t-0", c, true);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(append(*log, 5, 100, kNow - 60'000).error, ErrorCode::none);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(append(*log, 5, 100, kNow).error, ErrorCode::none);
  size_t before = log->segment_count();
  EXPECT_GT(log->enforce_retention(kNow + 1000, log->log_end_offset()), 0u);
  EXPECT_LT(log->segment_count(), before);
  EXPECT_GT(log->log_start_offset(), 0);
  EXPECT_LE(log->log_start_offset(), 50);
  EXPECT_EQ(log->read(0, 100, true, INT64_MAX).error, ErrorCode::offset_out_of_range);
  // Everything expires: the active segment is rolled so it can go, the log stays usable.
  log->enforce_retention(kNow + 100'000, log->log_end_offset());
  EXPECT_EQ(log->log_start_offset(), 100);
  EXPECT_EQ(log->log_end_offset(), 100);
  EXPECT_EQ(log->size_bytes(), 0u);
  EXPECT_EQ(append(*log, 1).base_offset, 100);
}

// A segment holding a record at or above the high watermark stays, whatever its age or the
// log's size: that record may be the only copy of an acknowledged write a new leader needs.
TEST(Log, RetentionDeletesOnlySegmentsWhollyBelowTheHighWatermark) {
  TempDir dir;
  LogConfig c = small_config();
  c.retention_bytes = 0;
  c.retention_ms = 1000;
  auto log = Log::open(dir.path() / "t-0", c, true);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(append(*log, 5, 100, kNow - 60'000).error, ErrorCode::none);
  const auto segs = log->segments();
  ASSERT_GT(segs.size(), 4u);
  const int64_t hw = segs[2]->base_offset() + 1;  // inside the third segment
  log->enforce_retention(kNow, hw);
  EXPECT_EQ(log->log_start_offset(), segs[2]->base_offset());
  EXPECT_LE(log->log_start_offset(), hw);
  EXPECT_EQ(log->log_end_offset(), 200);
  // Nothing committed: nothing goes.
  TempDir dir2;
  auto fresh = Log::open(dir2.path() / "t-0", c, true);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(append(*fresh, 5, 100, kNow - 60'000).error, ErrorCode::none);
  EXPECT_EQ(fresh->enforce_retention(kNow, 0), 0u);
  EXPECT_EQ(fresh->log_start_offset(), 0);
}

// A truncation below the log start (a replica whose retention ran ahead of the new leader's
// log) empties the log and starts it at the target, so that it can follow again.
TEST(Log, TruncationBelowTheLogStartStartsTheLogAgainThere) {
  TempDir dir;
  LogConfig c = small_config();
  auto log = Log::open(dir.path() / "t-0", c, true);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
  ASSERT_EQ(log->delete_records_before(120, kNow), ErrorCode::none);
  log->enforce_retention(kNow, log->log_end_offset());
  ASSERT_GE(log->segments().front()->base_offset(), 100);
  log->truncate_to(30);
  EXPECT_EQ(log->log_end_offset(), 30);
  EXPECT_EQ(log->log_start_offset(), 30);
  EXPECT_EQ(log->size_bytes(), 0u);
  EXPECT_EQ(append(*log, 1).base_offset, 30);
}

TEST(Log, RetentionBySize) {
  TempDir dir;
  LogConfig c = small_config();
  c.retention_bytes = 8192;
  auto log = Log::open(dir.path() / "t-0", c, true);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
  EXPECT_GT(log->size_bytes(), 8192u);
  log->enforce_retention(kNow, log->log_end_offset());
  EXPECT_LE(log->size_bytes(), 8192u + 4096u);
  EXPECT_GT(log->log_start_offset(), 0);
  EXPECT_EQ(log->log_start_offset(), log->segments().front()->base_offset());
}

TEST(Log, DeleteRecordsBeforeAndRestartKeepsLogStart) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, small_config(), true);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
    size_t before = log->segment_count();
    EXPECT_EQ(log->delete_records_before(42), ErrorCode::none);
    EXPECT_EQ(log->log_start_offset(), 42);
    EXPECT_LT(log->segment_count(), before);
    EXPECT_LE(log->segments().front()->base_offset(), 42);
    EXPECT_EQ(log->read(41, 100, true, INT64_MAX).error, ErrorCode::offset_out_of_range);
    EXPECT_EQ(log->read(42, 100, true, INT64_MAX).error, ErrorCode::none);
    EXPECT_EQ(log->delete_records_before(1000), ErrorCode::offset_out_of_range);
    log->close();
  }
  auto log = Log::open(path, small_config(), true);
  EXPECT_EQ(log->log_start_offset(), 42);
  EXPECT_EQ(log->log_end_offset(), 100);
  EXPECT_EQ(append(*log, 1).base_offset, 100);
}

TEST(Log, CleanRestartContinuesOffsets) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, small_config(), true);
    for (int i = 0; i < 12; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
  }
  auto log = Log::open(path, small_config(), true);
  EXPECT_EQ(log->log_end_offset(), 60);
  EXPECT_EQ(append(*log, 1).base_offset, 60);
  EXPECT_EQ(batch_bases(read_all(log->read(33, 1, true, INT64_MAX).records)), (std::vector<int64_t>{30}));
}

TEST(Log, TruncateTo) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", small_config(), true);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
  log->truncate_to(50);
  EXPECT_EQ(log->log_end_offset(), 50);
  log->truncate_to(23);  // inside a batch: the whole batch goes
  EXPECT_EQ(log->log_end_offset(), 20);
  EXPECT_EQ(append(*log, 1).base_offset, 20);
  auto bases = batch_bases(read_all(log->read(0, 1 << 20, true, INT64_MAX).records));
  EXPECT_EQ(bases.back(), 20);
  EXPECT_EQ(bases.size(), 5u);
}

TEST(Log, TruncateToExactSegmentEnd) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", small_config(), true);
  for (int i = 0; i < 20; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
  auto segs = log->segments();
  ASSERT_GT(segs.size(), 2u);
  int64_t second_base = segs[1]->base_offset();
  // Cutting at the first offset of a segment leaves the previous segment whole.
  log->truncate_to(second_base);
  EXPECT_EQ(log->segment_count(), 1u);
  EXPECT_EQ(log->log_end_offset(), second_base);
  EXPECT_EQ(append(*log, 1).base_offset, second_base);
}

TEST(Log, FlushTargetAndMarkFlushed) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", LogConfig{}, true);
  append(*log, 3);
  auto t = log->flush_target();
  EXPECT_EQ(t.offset, 3);
  // The active segment, and the directory that got a new segment file (opened by the sync).
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.dir, dir.path() / "t-0");
  EXPECT_TRUE(t.epochs_file.empty());
  EXPECT_NE(t.dir_version, 0u);
  EXPECT_TRUE(sync_flush_target(t));
  log->mark_flushed(t.offset, t.dir_version);
  EXPECT_EQ(log->recovery_point(), 3);
  EXPECT_FALSE(log->dir_dirty());
  auto idle = log->flush_target();
  EXPECT_TRUE(idle.files.empty());
  EXPECT_TRUE(idle.dir.empty());
  // A roll creates files again: the next flush takes the directory too.
  log->roll(kNow);
  append(*log, 2);
  auto rolled = log->flush_target();
  EXPECT_EQ(rolled.files.size(), 1u);
  EXPECT_FALSE(rolled.dir.empty());
}

TEST(Log, LeaderEpochsAreWrittenWhenRecordsBecomeDurableAndSyncedBeforeTheDirectory) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  auto log = Log::open(path, LogConfig{}, true);
  append(*log, 3);
  ASSERT_EQ(log->flush(), ErrorCode::none);
  // A new epoch at the log end: no I/O while no record of it needs to be durable.
  log->set_leader_epochs("0\n1\n5 3\n");
  EXPECT_FALSE(log->read_leader_epochs().has_value());
  EXPECT_FALSE(log->dir_dirty());
  EXPECT_TRUE(log->flush_target().files.empty());
  append(*log, 2);
  auto t = log->flush_target();
  EXPECT_EQ(log->read_leader_epochs(), "0\n1\n5 3\n");
  // The segment, then the epoch file, then the directory (the entry of its rename).
  ASSERT_EQ(t.files.size(), 1u);
  EXPECT_EQ(t.epochs_file, path / Log::kLeaderEpochFile);
  EXPECT_EQ(t.dir, path);
  EXPECT_TRUE(sync_flush_target(t));
  log->mark_flushed(t.offset, t.dir_version);
  EXPECT_FALSE(log->dir_dirty());
  EXPECT_TRUE(log->flush_target().dir.empty());
  // An idle log's change is never written, not even at a clean stop.
  log.reset();
  log = Log::open(path, LogConfig{}, true);
  log->set_leader_epochs("0\n2\n5 3\n6 5\n");
  log.reset();
  EXPECT_EQ(Log::open(path, LogConfig{}, true)->read_leader_epochs(), "0\n1\n5 3\n");
}

TEST(Log, RecoveryReportsTheLeaderEpochsOfTheBatchesItScanned) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, LogConfig{}, true);
    for (int32_t epoch : {3, 3, 4, 7}) {
      Bytes b = testing::make_batch(2, 10, 1000);
      ASSERT_EQ(log->append(b, epoch, kNow).error, ErrorCode::none);
    }
  }
  EXPECT_EQ(Log::open(path, LogConfig{}, true)->recovered_epochs(), std::vector<EpochStart>{});
  auto log = Log::open(path, LogConfig{}, false);
  EXPECT_EQ(log->recovered_epochs(), (std::vector<EpochStart>{{3, 0}, {4, 4}, {7, 6}}));
}

TEST(Log, DirectoryStaysDirtyUntilItsSyncIsConfirmed) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", LogConfig{}, true);
  append(*log, 3);
  // A target was taken but its sync failed (mark_flushed never called): the next target
  // must take the directory again.
  auto lost = log->flush_target();
  ASSERT_NE(lost.dir_version, 0u);
  EXPECT_TRUE(log->dir_dirty());
  auto again = log->flush_target();
  EXPECT_EQ(again.dir_version, lost.dir_version);
  // Files synced without the directory do not count for it.
  log->mark_flushed(again.offset);
  EXPECT_TRUE(log->dir_dirty());
  log->mark_flushed(again.offset, again.dir_version);
  EXPECT_FALSE(log->dir_dirty());
}

TEST(Log, RollWithoutNewDataStillNeedsADirectorySync) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", small_config(), true);
  append(*log, 3);
  ASSERT_EQ(log->flush(), ErrorCode::none);
  EXPECT_FALSE(log->dir_dirty());
  // DeleteRecords up to the end rolls the active segment: no data, a new file.
  ASSERT_EQ(log->delete_records_before(log->log_end_offset(), kNow), ErrorCode::none);
  auto t = log->flush_target();
  EXPECT_LE(t.offset, log->recovery_point());
  EXPECT_NE(t.dir_version, 0u);
  // A directory created while a sync of an older version ran stays dirty afterwards.
  log->roll(kNow);  // empty active segment: nothing to roll
  append(*log, 1);
  log->roll(kNow);
  log->mark_flushed(t.offset, t.dir_version);
  EXPECT_TRUE(log->dir_dirty());
}

TEST(Log, FailedWriteLeavesLogConsistent) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", LogConfig{}, true);
  ASSERT_EQ(append(*log, 2).error, ErrorCode::none);
  uint64_t size = log->size_bytes();
  // A file size limit makes pwrite stop part-way, like a full disk.
  auto old = std::signal(SIGXFSZ, SIG_IGN);
  rlimit saved{};
  ::getrlimit(RLIMIT_FSIZE, &saved);
  rlimit lim = saved;
  lim.rlim_cur = size + 100;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &lim), 0);
  auto r = append(*log, 20, 100);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old);
  EXPECT_EQ(r.error, ErrorCode::kafka_storage_error);
  EXPECT_EQ(log->size_bytes(), size);
  EXPECT_EQ(std::filesystem::file_size(dir.path() / "t-0" / "00000000000000000000.log"), size);
  EXPECT_EQ(append(*log, 1).base_offset, 2);
}

}  // namespace
}  // namespace brokerd::storage

namespace brokerd::storage {
namespace {

// The records of every stored batch, as (key, value) pairs, and each batch's codec.
std::pair<std::vector<std::pair<std::string, std::string>>, std::vector<Compression>> stored(const Log& log) {
  std::vector<std::pair<std::string, std::string>> records;
  std::vector<Compression> codecs;
  Bytes all = testing::read_all(log.read(0, 1 << 24, true, INT64_MAX).records);
  size_t pos = 0;
  while (pos < all.size()) {
    RecordBatchView v(std::span<const std::byte>(all).subspan(pos));
    EXPECT_TRUE(v.crc_valid());
    codecs.push_back(v.compression());
    RecordReader r{v};
    Record rec;
    auto text = [](const std::optional<std::span<const std::byte>>& s) {
      return s ? std::string(reinterpret_cast<const char*>(s->data()), s->size()) : std::string("<null>");
    };
    while (r.next(rec)) records.emplace_back(text(rec.key), text(rec.value));
    pos += v.size();
  }
  return {records, codecs};
}

TEST(Log, ACompressionTypeReencodesBatchesWrittenWithAnotherCodec) {
  TempDir dir;
  LogConfig cfg;
  cfg.recompress = Compression::zstd;
  cfg.compression_level = 19;
  auto log = Log::open(dir.path() / "t-0", cfg, true);
  Bytes plain = testing::make_batch(3, 50);
  Bytes lz4 = testing::make_batch(2, 50, 2000, Compression::lz4);
  Bytes zstd = testing::make_batch(2, 50, 3000, Compression::zstd);
  ASSERT_EQ(log->append(plain, 5, testing::kNow).base_offset, 0);
  ASSERT_EQ(log->append(lz4, 5, testing::kNow).base_offset, 3);
  ASSERT_EQ(log->append(zstd, 5, testing::kNow).base_offset, 5);
  auto [records, codecs] = stored(*log);
  EXPECT_EQ(codecs, (std::vector<Compression>{Compression::zstd, Compression::zstd, Compression::zstd}));
  ASSERT_EQ(records.size(), 7u);
  EXPECT_EQ(records[0], (std::pair<std::string, std::string>{"key-0", std::string(50, 'a')}));
  EXPECT_EQ(records[4], (std::pair<std::string, std::string>{"key-1", std::string(50, 'b')}));
  // The node's own writers (group coordinator, metadata) keep their codec.
  Bytes own = testing::make_batch(1, 10);
  ASSERT_EQ(log->append(own, 5, testing::kNow, AppendOrigin::coordinator).error, ErrorCode::none);
  EXPECT_EQ(stored(*log).second.back(), Compression::none);
}

TEST(Log, UncompressedCompressionTypeStoresRecordsPlain) {
  TempDir dir;
  LogConfig cfg;
  cfg.recompress = Compression::none;
  auto log = Log::open(dir.path() / "t-0", cfg, true);
  Bytes gzip = testing::make_batch(4, 200, 1000, Compression::gzip);
  auto res = log->append(gzip, 5, testing::kNow);
  ASSERT_EQ(res.error, ErrorCode::none);
  EXPECT_EQ(res.last_offset, 3);
  auto [records, codecs] = stored(*log);
  EXPECT_EQ(codecs, std::vector<Compression>{Compression::none});
  EXPECT_EQ(records.size(), 4u);
  // Re-encoded batches must still fit max.message.bytes.
  LogConfig small = cfg;
  small.max_message_bytes = 300;
  auto tight = Log::open(dir.path() / "t-1", small, true);
  Bytes big = testing::make_batch(10, 200, 1000, Compression::gzip);  // compresses below 300 bytes
  ASSERT_LE(big.size(), 300u);
  EXPECT_EQ(tight->append(big, 5, testing::kNow).error, ErrorCode::message_too_large);
}

}  // namespace
}  // namespace brokerd::storage
