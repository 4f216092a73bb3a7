// Edge cases of Log: retention and DeleteRecords that empty the log, recovery of an active
// segment holding only a torn header, reads at boundaries, timestamp search over
// non-monotonic timestamps, truncation and producer state.
#include <gtest/gtest.h>

#include <fstream>

#include "brokerd/storage/log.h"
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
namespace fs = std::filesystem;

TEST(LogEdge, RetentionOfEverythingThenRestartContinuesOffsets) {
  TempDir dir;
  auto c = small_config();
  c.retention_ms = 1000;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, c, true);
    for (int i = 0; i < 20; ++i) ASSERT_EQ(append(*log, 5, 100, kNow).error, ErrorCode::none);
    ASSERT_EQ(log->log_end_offset(), 100);
    log->enforce_retention(kNow + 10'000, log->log_end_offset());
    EXPECT_EQ(log->log_start_offset(), 100);
    EXPECT_EQ(log->log_end_offset(), 100);
    EXPECT_EQ(log->segment_count(), 1u);
  }
  for (bool clean : {true, false}) {
    auto log = Log::open(path, c, clean);
    EXPECT_EQ(log->log_start_offset(), 100);
    EXPECT_EQ(log->log_end_offset(), clean ? 100 : 105);
    auto r = append(*log, 5, 100, kNow + 20'000, kNow + 20'000);
    ASSERT_EQ(r.error, ErrorCode::none);
    EXPECT_EQ(r.base_offset, clean ? 100 : 105);
  }
}

TEST(LogEdge, DeleteRecordsToLogEndThenRestart) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, small_config(), true);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
    ASSERT_EQ(log->delete_records_before(15, kNow), ErrorCode::none);
    EXPECT_EQ(log->log_start_offset(), 15);
    EXPECT_EQ(log->read(15, 1 << 20, true, INT64_MAX).error, ErrorCode::none);
    EXPECT_EQ(log->read(14, 1 << 20, true, INT64_MAX).error, ErrorCode::offset_out_of_range);
    EXPECT_EQ(log->delete_records_before(16, kNow), ErrorCode::offset_out_of_range);
  }
  auto log = Log::open(path, small_config(), false);
  EXPECT_EQ(log->log_start_offset(), 15);
  EXPECT_EQ(append(*log, 5).base_offset, 15);
}

TEST(LogEdge, TornHeaderOnlyInNewActiveSegment) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  {
    auto log = Log::open(path, small_config(), true);
    for (int i = 0; i < 3; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
    log->roll(kNow);
  }
  Bytes b = make_batch(5);
  {
    std::ofstream out(path / "00000000000000000015.log", std::ios::binary | std::ios::app);
    out.write(reinterpret_cast<const char*>(b.data()), 30);
  }
  auto log = Log::open(path, small_config(), false);
  EXPECT_EQ(log->log_end_offset(), 15);
  EXPECT_EQ(fs::file_size(path / "00000000000000000015.log"), 0u);
  EXPECT_EQ(append(*log, 5).base_offset, 15);
  EXPECT_EQ(batch_bases(read_all(log->read(10, 1 << 20, true, INT64_MAX).records)),
            (std::vector<int64_t>{10, 15}));
}

TEST(LogEdge, ReadAtSegmentBoundaries) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", small_config(), true);
  for (int i = 0; i < 30; ++i) ASSERT_EQ(append(*log, 5).error, ErrorCode::none);
  ASSERT_GT(log->segment_count(), 2u);
  for (const Segment* s : log->segments()) {
    if (s->empty()) continue;
    auto bases = batch_bases(read_all(log->read(s->base_offset(), 1 << 20, true, INT64_MAX).records));
    ASSERT_FALSE(bases.empty());
    EXPECT_EQ(bases.front(), s->base_offset());
    EXPECT_EQ(bases.back(), 145);
    auto before = batch_bases(read_all(log->read(s->base_offset() - 1 < 0 ? 0 : s->base_offset() - 1, 1 << 20,
                                                true, INT64_MAX).records));
    EXPECT_EQ(before.back(), 145);
  }
  // max_offset inside a batch: the batch holding it is not returned whole past the bound.
  auto r = batch_bases(read_all(log->read(0, 1 << 20, true, 12).records));
  EXPECT_EQ(r, (std::vector<int64_t>{0, 5, 10}));
}

TEST(LogEdge, OffsetForTimestampWithNonMonotonicTimestamps) {
  TempDir dir;
  auto c = small_config();
  c.segment_bytes = 1 << 20;
  c.index_interval_bytes = 1;
  auto log = Log::open(dir.path() / "t-0", c, true);
  // Batches with timestamps 5000.., 1000.., 3000.., 2000.., 6000..
  for (int64_t ts : {5000, 1000, 3000, 2000, 6000}) ASSERT_EQ(append(*log, 2, 10, ts).error, ErrorCode::none);
  auto check = [&](int64_t ts, int64_t want_offset) {
    auto r = log->offset_for_timestamp(ts);
    ASSERT_TRUE(r.has_value()) << ts;
    EXPECT_EQ(r->offset, want_offset) << ts;
  };
  check(0, 0);
  check(1500, 0);
  check(5001, 1);
  check(5002, 8);
  check(6001, 9);
  EXPECT_FALSE(log->offset_for_timestamp(6002).has_value());
  log->roll(kNow);
  for (int64_t ts : {4000, 100}) ASSERT_EQ(append(*log, 2, 10, ts).error, ErrorCode::none);
  check(3500, 0);
  check(5500, 8);
  ASSERT_EQ(log->delete_records_before(9, kNow), ErrorCode::none);
  check(0, 9);
  check(6001, 9);
  EXPECT_FALSE(log->offset_for_timestamp(6002).has_value());
}

}  // namespace
}  // namespace brokerd::storage
