// A full file system: index entries are written through a shared mapping, so a page the
// file system cannot allocate must fail the append (ENOSPC, KAFKA_STORAGE_ERROR) instead of
// faulting with SIGBUS. Runs on a small tmpfs mounted by the test (root only, else skipped).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "brokerd/storage/log.h"
#include "brokerd/storage/offset_index.h"
#include "brokerd/storage/time_index.h"
#include "storage_test_util.h"

namespace brokerd::storage {
namespace {

using testing::batch_bases;
using testing::kNow;
using testing::make_batch;
using testing::read_all;
using testing::TempDir;

namespace fs = std::filesystem;

// A tmpfs of `size` mounted in a temp dir for the life of the object.
class SmallFs {
 public:
  explicit SmallFs(const char* size) {
    mnt_ = dir_.path() / "mnt";
    fs::create_directories(mnt_);
    const std::string opts = std::string("size=") + size;
    if (::mount("tmpfs", mnt_.c_str(), "tmpfs", 0, opts.c_str()) == 0) mounted_ = true;
    else error_ = std::strerror(errno);
  }
  ~SmallFs() {
    if (mounted_) ::umount2(mnt_.c_str(), MNT_DETACH);
  }
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  const fs::path& path() const { return mnt_; }

  // Writes a ballast file until the file system has no block left.
  void fill() {
    const fs::path p = mnt_ / "ballast";
    int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    std::vector<char> chunk(4096, 'x');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    EXPECT_EQ(errno, ENOSPC);
    ::close(fd);
  }
  void free_space() { fs::remove(mnt_ / "ballast"); }

 private:
  TempDir dir_;
  fs::path mnt_;
  bool mounted_ = false;
  std::string error_;
};

TEST(FullDisk, IndexAppendsFailInsteadOfFaulting) {
  SmallFs small("1m");
  if (!small.mounted()) GTEST_SKIP() << "cannot mount a tmpfs: " << small.error();
  OffsetIndex offsets(small.path() / "a.index", 0, 1 << 20, true);
  TimeIndex times(small.path() / "a.timeindex", 0, 1 << 20, true);
  ASSERT_TRUE(offsets.append(10, 100));  // its first page is taken while there is room
  ASSERT_TRUE(times.maybe_append(1000, 10));
  small.fill();

  // The rest of the first page still takes entries; the next page has no block.
  int64_t offset = 10;
  while (offsets.append(offset + 10, static_cast<uint32_t>(offset * 10 + 100))) offset += 10;
  EXPECT_EQ(offsets.entries(), 4096u / OffsetIndex::kEntrySize);
  EXPECT_EQ(offsets.reserve(1), ENOSPC);
  int64_t ts = 1000;
  while (times.maybe_append(ts + 1, ts - 980)) ++ts;
  EXPECT_EQ(times.entries(), 4096u / TimeIndex::kEntrySize);
  EXPECT_EQ(times.reserve(1), ENOSPC);
  EXPECT_EQ(offsets.lookup(offset).offset, offset);

  small.free_space();
  EXPECT_EQ(offsets.reserve(1), 0);
  EXPECT_TRUE(offsets.append(offset + 10, static_cast<uint32_t>(offset * 10 + 200)));
  EXPECT_TRUE(times.maybe_append(ts + 1, ts - 980 + 1));
  EXPECT_EQ(offsets.lookup(offset + 10).offset, offset + 10);
}

TEST(FullDisk, PreallocatedSegmentFailsAppendsAndRecovers) {
  SmallFs small("12m");
  if (!small.mounted()) GTEST_SKIP() << "cannot mount a tmpfs: " << small.error();
  LogConfig cfg;
  cfg.segment_bytes = 8 << 20;
  cfg.preallocate = true;
  cfg.retention_ms = -1;
  auto log = Log::open(small.path() / "t-0", cfg, true);  // the segment's 8 MB are taken here
  int64_t acked = 0;
  for (; acked < 10; ++acked) {
    Bytes b = make_batch(1, 1000);
    ASSERT_EQ(log->append(b, 1, kNow).error, ErrorCode::none);
  }
  small.fill();

  // The log file has room left; its index pages do not. Appends fail once they need one.
  ErrorCode error = ErrorCode::none;
  for (int i = 0; i < 3000; ++i) {
    Bytes b = make_batch(1, 1000);
    auto r = log->append(b, 1, kNow);
    if (r.error != ErrorCode::none) {
      error = r.error;
      break;
    }
    EXPECT_EQ(r.base_offset, acked);
    ++acked;
  }
  EXPECT_EQ(error, ErrorCode::kafka_storage_error);
  EXPECT_GT(acked, 1000);  // the index pages taken before the disk filled were used
  EXPECT_EQ(log->log_end_offset(), acked);

  small.free_space();
  Bytes b = make_batch(1, 1000);
  auto r = log->append(b, 1, kNow);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.base_offset, acked);
  auto bases = batch_bases(read_all(log->read(0, 64 << 20, true, INT64_MAX).records));
  ASSERT_EQ(static_cast<int64_t>(bases.size()), acked + 1);
  for (int64_t i = 0; i <= acked; ++i) EXPECT_EQ(bases[static_cast<size_t>(i)], i);
}

}  // namespace
}  // namespace brokerd::storage
