// The log's side of compaction: the closed segments a cleaner may read, and the swap of
// cleaned segments for the ones they replace (resumed at start when a crash interrupted it).
#include "brokerd/storage/log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/storage/record_batch.h"
#include "brokerd/storage/recompress.h"

namespace brokerd::storage {

namespace fs = std::filesystem;

std::vector<SegmentSnapshot> Log::closed_segments() const {
  touch();
  std::vector<SegmentSnapshot> out;
  for (auto it = segments_.begin(); it != segments_.end() && std::next(it) != segments_.end(); ++it) {
    const Segment& s = *it->second;
    out.push_back(SegmentSnapshot{s.base_offset(), s.next_offset(), s.size(), s.largest_timestamp(), s.file()});
  }
  return out;
}

namespace {

void fsync_path(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// `<stem>.swap-end`: the first offset after the segments a compaction swap replaces.
constexpr const char* kSwapEndSuffix = ".swap-end";

bool write_swap_end(const std::string& stem, int64_t end) {
  const std::string text = std::to_string(end) + "\n";
  int fd = ::open((stem + kSwapEndSuffix).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

std::optional<int64_t> read_swap_end(const std::string& stem) {
  std::ifstream in(stem + kSwapEndSuffix);
  int64_t end = -1;
  if (in >> end && end >= 0) return end;
  return std::nullopt;
}

}  // namespace

namespace {
// Whether `seg` is still the very file a snapshot was taken of (a segment re-created at the
// same base offset is another file; one reopened after release_files() is the same).
bool same_file(const Segment& seg, const SegmentSnapshot& o) {
  if (seg.next_offset() != o.next_offset || seg.size() != o.size || !o.file) return false;
  struct stat a {}, b {};
  return ::fstat(o.file->fd(), &a) == 0 && ::stat(seg.log_path().c_str(), &b) == 0 && a.st_ino == b.st_ino &&
         a.st_dev == b.st_dev;
}
}  // namespace

bool Log::replace_segments(std::span<const SegmentSnapshot> old, int64_t now_ms, int crash_after_step) {
  touch();
  if (old.empty() || closed_) return false;
  // The segments must still be there, closed, contiguous and the very files the cleaner read.
  auto it = segments_.find(old.front().base_offset);
  for (const auto& o : old) {
    if (it == segments_.end() || it->first != o.base_offset || std::next(it) == segments_.end() ||
        !same_file(*it->second, o)) {
      return false;
    }
    ++it;
  }
  const int64_t base = old.front().base_offset;
  const std::string stem = (dir_ / segment_file_stem(base)).string();
  static constexpr const char* kExts[] = {".index", ".timeindex", ".log"};  // .log last: it commits
  for (const char* ext : kExts) {
    if (!fs::exists(stem + ext + ".cleaned")) return false;
  }
  // 0. Where the replaced range ends, durable before the swap commits: recovery cannot infer
  //    it from the swap's batches when the last replaced segments lost every record.
  if (!write_swap_end(stem, old.back().next_offset)) return false;
  fsync_path(dir_);
  // 1. .cleaned -> .swap. Once `.log.swap` exists, recovery finishes the swap.
  for (const char* ext : kExts) fs::rename(stem + ext + ".cleaned", stem + ext + ".swap");
  fsync_path(dir_);
  if (crash_after_step == 1) return true;
  // 2. The old segments leave the log (their files become .deleted); their aborted
  //    transactions move to the new segment's .txnindex below.
  std::vector<AbortedTxn> aborted;
  for (const auto& o : old) {
    auto s = segments_.find(o.base_offset);
    const auto& es = s->second->txn_index().entries();
    aborted.insert(aborted.end(), es.begin(), es.end());
    delete_segment(s, now_ms);
  }
  if (crash_after_step == 2) return true;
  // 3. .swap -> final names, the .log first (a crash after it leaves indexes to rebuild).
  fs::rename(stem + ".log.swap", stem + ".log");
  fs::rename(stem + ".index.swap", stem + ".index");
  fs::rename(stem + ".timeindex.swap", stem + ".timeindex");
  fsync_path(dir_);
  fs::remove(stem + kSwapEndSuffix);  // without a `.log.swap` beside it, recovery ignores it
  auto seg = Segment::open(dir_, base, cfg_, false, now_ms);
  if (!seg->load_state()) {
    seg.reset();
    seg = Segment::open(dir_, base, cfg_, true, now_ms);
    seg->recover(cfg_.max_message_bytes);
    seg->make_inactive();
  }
  if (!aborted.empty()) seg->txn_index().set_entries(std::move(aborted));
  segments_.emplace(base, std::move(seg));
  return true;
}

void Log::complete_interrupted_swaps(std::vector<int64_t>& bases, const std::vector<std::string>& names) {
  auto logger = module_logger("storage");
  std::vector<int64_t> swaps;
  for (const auto& name : names) {
    if (!name.ends_with(".log.swap")) continue;
    if (auto b = parse_segment_file_stem(name.substr(0, name.size() - 9))) swaps.push_back(*b);
    else fs::remove(dir_ / name);
  }
  for (int64_t base : swaps) {
    const std::string stem = (dir_ / segment_file_stem(base)).string();
    // The swap file was synced before it was renamed: read where its batches end.
    int64_t next = base;
    int fd = ::open((stem + ".log.swap").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    std::byte h[batch_layout::header_size];
    for (off_t pos = 0; ::pread(fd, h, sizeof h, pos) == static_cast<ssize_t>(sizeof h);) {
      RecordBatchView v(std::span<const std::byte>(h, sizeof h));
      if (v.magic() != 2 || v.batch_length() < static_cast<int32_t>(batch_layout::header_size - batch_layout::log_overhead)) break;
      next = std::max(next, v.last_offset() + 1);
      pos += static_cast<off_t>(v.size());
    }
    ::close(fd);
    // The recorded end of the replaced range covers old segments that cleaning emptied.
    if (auto end = read_swap_end(stem)) next = std::max(next, *end);
    // Every old segment the swap replaces goes; the swap takes the first one's name, and
    // the aborted transactions of those still present.
    std::vector<AbortedTxn> aborted;
    std::erase_if(bases, [&](int64_t b) {
      if (b != base && (b < base || b >= next)) return false;
      auto old = (dir_ / segment_file_stem(b)).string();
      const TxnIndex index(old + ".txnindex");
      const auto& es = index.entries();
      aborted.insert(aborted.end(), es.begin(), es.end());
      for (const char* ext : {".log", ".index", ".timeindex", ".txnindex"}) fs::remove(old + ext);
      return true;
    });
    if (!aborted.empty()) TxnIndex(stem + ".txnindex").set_entries(std::move(aborted));
    fs::remove(stem + ".index");
    fs::remove(stem + ".timeindex");
    fs::rename(stem + ".log.swap", stem + ".log");
    bases.push_back(base);
    logger->warn("{}: completed an interrupted compaction swap of segment {}", dir_.string(), base);
  }
  std::sort(bases.begin(), bases.end());
  if (!swaps.empty()) fsync_path(dir_);
  // Range files of finished swaps, or of swaps that never committed.
  for (const auto& name : names)
    if (name.ends_with(kSwapEndSuffix)) fs::remove(dir_ / name);
}

}  // namespace brokerd::storage
