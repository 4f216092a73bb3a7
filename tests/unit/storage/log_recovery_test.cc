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

namespace fs = std::filesystem;

LogConfig config() {
  LogConfig c;
  c.segment_bytes = 8192;
  c.index_interval_bytes = 256;
  c.retention_ms = -1;
  return c;
}

void append_bytes(const fs::path& file, const Bytes& b) {
  std::ofstream out(file, std::ios::binary | std::ios::app);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// Writes `batches` batches of 5 records, then "crashes": the Log is destroyed without the
// caller treating it as a clean shutdown on the next open.
void fill(const fs::path& path, int batches) {
  auto log = Log::open(path, config(), true);
  for (int i = 0; i < batches; ++i) {
    Bytes b = make_batch(5, 100);
    ASSERT_EQ(log->append(b, 1, 1000).error, ErrorCode::none);
  }
}

fs::path active_log_file(const fs::path& dir) {
  fs::path last;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log" && (last.empty() || e.path() > last)) last = e.path();
  return last;
}

TEST(LogRecovery, TornTailIsTruncatedAndAppendsContinue) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  fill(path, 25);  // several segments
  fs::path active = active_log_file(path);
  uint64_t good_size = fs::file_size(active);
  Bytes half = make_batch(5, 100);
  half.resize(half.size() / 2);
  append_bytes(active, half);
  append_bytes(active, Bytes(300, std::byte{0x42}));

  auto log = Log::open(path, config(), false);
  EXPECT_EQ(fs::file_size(active), good_size);
  EXPECT_EQ(log->log_end_offset(), 125);
  Bytes b = make_batch(2);
  EXPECT_EQ(log->append(b, 1, 1000).base_offset, 125);
  // Index works: a lookup in the middle of the recovered segment lands on the right batch.
  auto bases = batch_bases(read_all(log->read(121, 1, true, INT64_MAX).records));
  ASSERT_EQ(bases.size(), 1u);
  EXPECT_EQ(bases[0], 120);
}

TEST(LogRecovery, CorruptBatchInTheMiddleCutsFromThere) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  fill(path, 4);  // one segment
  fs::path active = active_log_file(path);
  size_t batch = make_batch(5, 100).size();
  {
    std::fstream f(active, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(static_cast<std::streamoff>(2 * batch + 100));  // inside batch 3's records
    f.put('\x7f');
  }
  auto log = Log::open(path, config(), false);
  EXPECT_EQ(log->log_end_offset(), 10);
  EXPECT_EQ(fs::file_size(active), 2 * batch);
}

TEST(LogRecovery, GarbageIndexIsRebuiltOnCleanOpen) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  fill(path, 6);
  {
    // An index whose entries point past the end of the file cannot be trusted.
    std::ofstream idx(path / "00000000000000000000.index", std::ios::binary | std::ios::trunc);
    for (int i = 0; i < 4; ++i) idx.write("\x00\x00\x00\x10\x7f\x00\x00\x00", 8);
  }
  auto log = Log::open(path, config(), true);
  EXPECT_EQ(log->log_end_offset(), 30);
  auto bases = batch_bases(read_all(log->read(17, 1, true, INT64_MAX).records));
  ASSERT_EQ(bases.size(), 1u);
  EXPECT_EQ(bases[0], 15);
}

TEST(LogRecovery, MissingIndexAndStrayFilesAreHandled) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  fill(path, 20);
  fs::remove(path / "00000000000000000000.index");
  fs::remove(path / "00000000000000000000.timeindex");
  append_bytes(path / "00000000000000000005.log.deleted", Bytes(10));
  append_bytes(path / "00000000000099999999.index", Bytes(16));  // no segment
  auto log = Log::open(path, config(), false);
  EXPECT_FALSE(fs::exists(path / "00000000000000000005.log.deleted"));
  EXPECT_FALSE(fs::exists(path / "00000000000099999999.index"));
  EXPECT_EQ(log->log_end_offset(), 100);
  auto bases = batch_bases(read_all(log->read(7, 1, true, INT64_MAX).records));
  ASSERT_EQ(bases.size(), 1u);
  EXPECT_EQ(bases[0], 5);
}

TEST(LogRecovery, EmptyActiveSegmentAfterCrash) {
  TempDir dir;
  auto path = dir.path() / "t-0";
  fill(path, 0);
  auto log = Log::open(path, config(), false);
  EXPECT_EQ(log->log_end_offset(), 0);
  Bytes b = make_batch(1);
  EXPECT_EQ(log->append(b, 0, 1).base_offset, 0);
}

}  // namespace
}  // namespace brokerd::storage
