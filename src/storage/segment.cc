#include "brokerd/storage/segment.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <random>
#include <system_error>

#include "brokerd/common/logger.h"
#include "brokerd/storage/file_budget.h"
#include "brokerd/storage/record_batch.h"
#include "varint.h"

namespace brokerd::storage {

namespace fs = std::filesystem;
namespace L = batch_layout;
using namespace detail;

std::string segment_file_stem(int64_t base_offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020lld", static_cast<long long>(base_offset));
  return buf;
}

std::optional<int64_t> parse_segment_file_stem(std::string_view stem) {
  if (stem.size() != 20) return std::nullopt;
  int64_t v = 0;
  for (char c : stem) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

Segment::Segment(const fs::path& dir, int64_t base_offset, const LogConfig& cfg)
    : dir_(dir),
      base_offset_(base_offset),
      cfg_(cfg),
      txn_index_(dir / (segment_file_stem(base_offset) + ".txnindex")),
      next_offset_(base_offset) {
  log_path_ = dir_ / (segment_file_stem(base_offset) + ".log");
}

// Destructors never throw: a failure here is logged and the next start recovers.
Segment::~Segment() {
  try {
    close();
  } catch (const std::exception& e) {
    module_logger("storage")->error("closing {} failed: {}", log_path_.string(), e.what());
  }
}

std::unique_ptr<Segment> Segment::create(const fs::path& dir, int64_t base_offset, const LogConfig& cfg, int64_t now_ms) {
  std::unique_ptr<Segment> s(new Segment(dir, base_offset, cfg));
  s->open_files(true, true, now_ms);
  return s;
}

std::unique_ptr<Segment> Segment::open(const fs::path& dir, int64_t base_offset, const LogConfig& cfg, bool active,
                                       int64_t now_ms) {
  std::unique_ptr<Segment> s(new Segment(dir, base_offset, cfg));
  s->open_files(false, active, now_ms);
  return s;
}

void Segment::open_files(bool create, bool active, int64_t now_ms) {
  active_ = active;
  created_ms_ = now_ms;
  if (cfg_.segment_jitter_ms > 0) {
    thread_local std::minstd_rand rng(std::random_device{}());
    roll_jitter_ms_ = std::uniform_int_distribution<int64_t>(0, cfg_.segment_jitter_ms - 1)(rng);
  }
  file_ = open_segment_file(log_path_, O_RDWR | (create ? O_CREAT | O_TRUNC : 0), cfg_.budgeted_files);
  const int fd = file_->fd();
  struct stat st {};
  ::fstat(fd, &st);
  size_ = static_cast<uint64_t>(st.st_size);
  // Space preallocated past the end by a process that did not close the segment. The margin
  // keeps file system metadata blocks from triggering a truncate, which would touch mtime.
  constexpr uint64_t kTrimMargin = 256 * 1024;
  if (!create && static_cast<uint64_t>(st.st_blocks) * 512 > ((size_ + 4095) & ~uint64_t{4095}) + kTrimMargin) {
    ::ftruncate(fd, static_cast<off_t>(size_));
  }
  auto stem = dir_ / segment_file_stem(base_offset_);
  if (create) {
    fs::remove(stem.string() + ".index");
    fs::remove(stem.string() + ".timeindex");
    txn_index_.reset();
    // preallocate=true: the whole segment's blocks at once (the file keeps its size 0).
    if (cfg_.preallocate && ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, static_cast<off_t>(cfg_.segment_bytes)) == 0) {
      preallocated_ = static_cast<uint64_t>(cfg_.segment_bytes);
    }
  }
  size_t max_index = static_cast<size_t>(cfg_.segment_index_bytes);
  // A missing index is created empty and rebuilt by the caller (load_state() fails).
  indexes_missing_ = !fs::exists(stem.string() + ".index") || !fs::exists(stem.string() + ".timeindex");
  bool writable = active || indexes_missing_;
  offset_index_ = std::make_unique<OffsetIndex>(stem.string() + ".index", base_offset_, max_index, writable);
  time_index_ = std::make_unique<TimeIndex>(stem.string() + ".timeindex", base_offset_, max_index, writable);
  if (create) indexes_missing_ = false;
  active_ = writable;
}

const std::shared_ptr<const FileHandle>& Segment::file() const {
  if (!file_) file_ = open_segment_file(log_path_, O_RDWR, cfg_.budgeted_files);
  return file_;
}

void Segment::release_files() {
  if (file_ && preallocated_ > size_) ::ftruncate(file_->fd(), static_cast<off_t>(size_));
  preallocated_ = 0;
  file_.reset();
  if (offset_index_) offset_index_->release();
  if (time_index_) time_index_->release();
}

int64_t Segment::largest_timestamp() const {
  if (max_timestamp_ >= 0) return max_timestamp_;
  struct stat st {};
  if (::stat(log_path_.c_str(), &st) == 0) return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
  return created_ms_;
}

void Segment::index_batch(const BatchPosition& b) {
  if (next_offset_ == base_offset_ && b.position == 0) first_batch_timestamp_ = b.max_timestamp;
  if (b.max_timestamp > max_timestamp_) {
    max_timestamp_ = b.max_timestamp;
    offset_of_max_timestamp_ = b.last_offset;
  }
  if (bytes_since_index_ > static_cast<uint64_t>(cfg_.index_interval_bytes)) {
    offset_index_->append(b.last_offset, static_cast<uint32_t>(b.position));
    if (max_timestamp_ >= 0) time_index_->maybe_append(max_timestamp_, offset_of_max_timestamp_);
    bytes_since_index_ = 0;
  }
  bytes_since_index_ += b.size;
  next_offset_ = b.last_offset + 1;
}

int Segment::append(std::span<const std::byte> payload, std::span<const AppendBatch> batches) {
  try {
    file();  // opened again after release_files()
  } catch (const std::system_error& e) {
    return e.code().value();
  }
  // At most one entry per batch in each index, and one more time index entry when the
  // segment stops being active: all of them can then be written whatever the disk holds.
  if (int err = offset_index_->reserve(batches.size()); err != 0) return err;
  if (int err = time_index_->reserve(batches.size() + 1); err != 0) return err;
  const std::byte* p = payload.data();
  size_t left = payload.size();
  uint64_t at = size_;
  while (left > 0) {
    ssize_t n = ::pwrite(file()->fd(), p, left, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = n < 0 ? errno : EIO;
      // Leave no partial batch behind: the next append must start at a batch boundary.
      while (::ftruncate(file()->fd(), static_cast<off_t>(size_)) != 0 && errno == EINTR) {
      }
      preallocated_ = 0;
      return err;
    }
    p += n;
    left -= static_cast<size_t>(n);
    at += static_cast<uint64_t>(n);
  }
  preallocate(at);
  for (const auto& b : batches) {
    index_batch(BatchPosition{size_ + b.position, static_cast<uint32_t>(b.size), b.base_offset, b.last_offset,
                              b.max_timestamp});
  }
  size_ = at;
  return 0;
}

void Segment::preallocate(uint64_t end) {
  // Only segments that are filling fast: a quiet partition reserves nothing.
  constexpr uint64_t kMinSize = 1u << 20;
  constexpr uint64_t kMaxStep = 16u << 20;
  if (!preallocate_ || end < kMinSize || end + kMinSize / 4 <= preallocated_) return;
  const uint64_t limit = static_cast<uint64_t>(cfg_.segment_bytes);
  const uint64_t target = std::min(end + std::min(end, kMaxStep), limit);
  if (target <= end) return;
  // KEEP_SIZE: the file's size stays the end of its last batch, which readers and recovery
  // rely on. Writes into allocated blocks skip ext4's delayed-allocation bookkeeping.
  if (::fallocate(file()->fd(), FALLOC_FL_KEEP_SIZE, static_cast<off_t>(end), static_cast<off_t>(target - end)) == 0) {
    preallocated_ = target;
  } else {
    preallocate_ = false;  // unsupported here, or the disk is full: plain appends still work
  }
}

void Segment::release_preallocated() {
  if (file_ && preallocated_ > size_) ::ftruncate(file_->fd(), static_cast<off_t>(size_));
  preallocated_ = 0;
}

bool Segment::read_bytes(uint64_t position, std::span<std::byte> out) const {
  int fd = -1;
  try {
    fd = file()->fd();
  } catch (const std::system_error&) {
    return false;
  }
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done, static_cast<off_t>(position + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::optional<BatchPosition> Segment::batch_at(uint64_t position) const {
  if (position + L::header_size > size_) return std::nullopt;
  std::byte h[L::header_size];
  if (!read_bytes(position, h)) return std::nullopt;
  int32_t len = static_cast<int32_t>(load_be32(h + L::batch_length));
  if (len < static_cast<int32_t>(L::header_size - L::log_overhead)) return std::nullopt;
  uint64_t size = static_cast<uint64_t>(len) + L::log_overhead;
  if (position + size > size_ || static_cast<int8_t>(h[L::magic]) != 2) return std::nullopt;
  BatchPosition b;
  b.position = position;
  b.size = static_cast<uint32_t>(size);
  b.base_offset = static_cast<int64_t>(load_be64(h + L::base_offset));
  b.last_offset = b.base_offset + static_cast<int32_t>(load_be32(h + L::last_offset_delta));
  b.max_timestamp = static_cast<int64_t>(load_be64(h + L::max_timestamp));
  return b;
}

std::optional<BatchPosition> Segment::find_batch(int64_t offset) const {
  uint64_t pos = offset_index_->lookup(offset).position;
  while (auto b = batch_at(pos)) {
    if (b->last_offset >= offset) return b;
    pos += b->size;
  }
  return std::nullopt;
}

uint64_t Segment::recover(int32_t max_message_bytes, std::vector<EpochStart>* epochs) {
  offset_index_->reset();
  time_index_->truncate_to(base_offset_);
  next_offset_ = base_offset_;
  max_timestamp_ = offset_of_max_timestamp_ = first_batch_timestamp_ = -1;
  bytes_since_index_ = 0;
  BatchLimits limits;
  limits.max_batch_bytes = SIZE_MAX;  // a lowered max.message.bytes must not cut old data
  limits.stored = true;               // compacted batches have offset gaps
  uint64_t file_size = size_;
  uint64_t pos = 0;
  Bytes buf;
  while (auto b = batch_at(pos)) {
    if (b->base_offset < next_offset_ || b->last_offset < b->base_offset) break;
    buf.resize(b->size);
    if (!read_bytes(pos, buf)) break;
    if (!validate_batch(buf, limits).ok()) break;
    if (epochs) {
      const int32_t epoch = RecordBatchView(buf).partition_leader_epoch();
      if (epoch >= 0 && (epochs->empty() || epochs->back().epoch != epoch)) epochs->push_back({epoch, b->base_offset});
    }
    index_batch(*b);
    pos += b->size;
  }
  if (pos < file_size) {
    ::ftruncate(file()->fd(), static_cast<off_t>(pos));
    size_ = pos;
    preallocated_ = 0;
  }
  return file_size - pos;
}

bool Segment::load_state() {
  if (indexes_missing_) return false;
  auto last = offset_index_->last_entry();
  if (last && last->position >= size_) return false;
  if (auto t = time_index_->last_entry()) {
    max_timestamp_ = t->timestamp;
    offset_of_max_timestamp_ = t->offset;
  }
  if (auto first = batch_at(0)) first_batch_timestamp_ = first->max_timestamp;
  else if (size_ > 0) return false;
  uint64_t pos = last ? last->position : 0;
  while (pos < size_) {
    auto b = batch_at(pos);
    if (!b || (last && pos == last->position && b->last_offset != last->offset)) return false;
    if (b->max_timestamp > max_timestamp_) {
      max_timestamp_ = b->max_timestamp;
      offset_of_max_timestamp_ = b->last_offset;
    }
    next_offset_ = b->last_offset + 1;
    pos += b->size;
  }
  bytes_since_index_ = size_ - (last ? last->position : 0);
  if (auto t = time_index_->last_entry(); t && t->offset >= next_offset_) return false;
  return true;
}

void Segment::truncate_to(int64_t offset, int32_t max_message_bytes) {
  auto b = find_batch(offset);
  // Nothing at or above `offset` here: keep every byte, but the state of a segment just
  // reopened must still be rebuilt.
  uint64_t cut = b ? b->position : size_;  // as Kafka: a batch is never split, the one holding `offset` goes
  ::ftruncate(file()->fd(), static_cast<off_t>(cut));
  size_ = cut;
  preallocated_ = 0;
  recover(max_message_bytes);
  txn_index_.truncate_to(offset);
}

void Segment::make_inactive() {
  if (!active_) return;
  release_preallocated();
  if (max_timestamp_ >= 0) time_index_->maybe_append(max_timestamp_, offset_of_max_timestamp_);
  offset_index_->make_read_only();
  time_index_->make_read_only();
  active_ = false;
}

void Segment::flush_indexes() {
  if (offset_index_) offset_index_->flush();
  if (time_index_) time_index_->flush();
  txn_index_.flush();
}

void Segment::close() {
  // A segment whose files could not all be opened has nothing to finish.
  if (!offset_index_ || !time_index_) {
    if (offset_index_) offset_index_->close();
    return;
  }
  make_inactive();
  offset_index_->close();
  time_index_->close();
}

std::vector<fs::path> Segment::rename_for_delete() {
  close();
  std::vector<fs::path> out;
  for (const fs::path& p : {log_path_, offset_index_->path(), time_index_->path()}) {
    fs::path to = p.string() + ".deleted";
    std::error_code ec;
    fs::rename(p, to, ec);
    if (!ec) out.push_back(to);
  }
  if (auto to = txn_index_.rename_with_suffix(".deleted")) out.push_back(*to);
  return out;
}

}  // namespace brokerd::storage
