// A segment that fills fast reserves disk blocks ahead of its end; its size stays the end of
// its last batch, and the reservation is given back when the segment closes or, after a
// crash, when it is opened again.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brokerd/storage/log.h"
#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::batch_bases;
using testing::kNow;
using testing::make_batch;
using testing::read_all;
using testing::TempDir;

namespace fs = std::filesystem;

uint64_t allocated_bytes(const fs::path& file) {
  struct stat st {};
  EXPECT_EQ(::stat(file.c_str(), &st), 0) << file;
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

bool fallocate_supported(const fs::path& dir) {
  const fs::path probe = dir / "probe";
  int fd = ::open(probe.c_str(), O_RDWR | O_CREAT, 0644);
  bool ok = fd >= 0 && ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20) == 0;
  if (fd >= 0) ::close(fd);
  fs::remove(probe);
  return ok;
}

LogConfig config() {
  LogConfig c;
  c.segment_bytes = 8 << 20;
  c.retention_ms = -1;
  c.file_delete_delay_ms = 0;
  return c;
}

// Appends batches of ~100 KB until the log holds at least `bytes`.
int64_t fill(Log& log, uint64_t bytes) {
  int64_t batches = 0;
  while (log.size_bytes() < bytes) {
    Bytes b = make_batch(100, 1000);
    EXPECT_EQ(log.append(b, 1, kNow).error, ErrorCode::none);
    ++batches;
  }
  return batches;
}

constexpr uint64_t kSlack = 64 * 1024;  // file system metadata, rounding to blocks

TEST(Preallocation, BusySegmentReservesAheadAndKeepsItsSize) {
  TempDir dir;
  if (!fallocate_supported(dir.path())) GTEST_SKIP() << "no fallocate on " << dir.path();
  auto log = Log::open(dir.path() / "t-0", config(), true);
  const int64_t batches = fill(*log, 3 << 20);
  const fs::path file = dir.path() / "t-0" / "00000000000000000000.log";
  EXPECT_EQ(fs::file_size(file), log->size_bytes());
  EXPECT_GT(allocated_bytes(file), log->size_bytes() + 256 * 1024);

  // Every batch reads back intact, and the end of the file is the end of the last batch.
  auto bases = batch_bases(read_all(log->read(0, 64 << 20, true, INT64_MAX).records));
  ASSERT_EQ(static_cast<int64_t>(bases.size()), batches);
  for (int64_t i = 0; i < batches; ++i) EXPECT_EQ(bases[static_cast<size_t>(i)], i * 100);
}

TEST(Preallocation, QuietSegmentReservesNothing) {
  TempDir dir;
  auto log = Log::open(dir.path() / "t-0", config(), true);
  fill(*log, 200 * 1024);
  const fs::path file = dir.path() / "t-0" / "00000000000000000000.log";
  EXPECT_LE(allocated_bytes(file), log->size_bytes() + kSlack);
}

TEST(Preallocation, RollAndCloseGiveTheReservationBack) {
  TempDir dir;
  if (!fallocate_supported(dir.path())) GTEST_SKIP() << "no fallocate on " << dir.path();
  const fs::path path = dir.path() / "t-0";
  {
    auto log = Log::open(path, config(), true);
    fill(*log, 12 << 20);  // one roll at 8 MB
    ASSERT_EQ(log->segment_count(), 2u);
    const Segment* first = log->segments().front();
    EXPECT_LE(allocated_bytes(first->log_path()), first->size() + kSlack);
    const Segment* active = log->segments().back();
    EXPECT_GT(allocated_bytes(active->log_path()), active->size() + 256 * 1024);
  }
  for (const auto& e : fs::directory_iterator(path)) {
    if (e.path().extension() != ".log") continue;
    EXPECT_LE(allocated_bytes(e.path()), fs::file_size(e.path()) + kSlack) << e.path();
  }
}

TEST(Preallocation, ReservationLeftByACrashIsTrimmedAtOpen) {
  TempDir dir;
  if (!fallocate_supported(dir.path())) GTEST_SKIP() << "no fallocate on " << dir.path();
  const fs::path path = dir.path() / "t-0";
  uint64_t size = 0;
  {
    auto log = Log::open(path, config(), true);
    fill(*log, 2 << 20);
    size = log->size_bytes();
  }
  // What a killed process leaves behind: blocks reserved past the end of the active segment.
  const fs::path file = path / "00000000000000000000.log";
  int fd = ::open(file.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(size), 16 << 20), 0);
  ::close(fd);
  ASSERT_GT(allocated_bytes(file), size + (8 << 20));

  auto log = Log::open(path, config(), false);
  EXPECT_EQ(log->size_bytes(), size);
  EXPECT_EQ(fs::file_size(file), size);
  EXPECT_LT(allocated_bytes(file), size + (8 << 20));  // at most a fresh reservation once it fills again
  Bytes b = make_batch(3);
  auto r = log->append(b, 1, kNow);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(fs::file_size(file), log->size_bytes());
}

}  // namespace
}  // namespace brokerd::storage
