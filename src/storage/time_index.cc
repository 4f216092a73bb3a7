#include "brokerd/storage/time_index.h"

#include "index_file.h"
#include "varint.h"

namespace brokerd::storage {

using detail::load_be32;
using detail::load_be64;

TimeIndex::TimeIndex(std::filesystem::path path, int64_t base_offset, size_t max_bytes, bool writable)
    : base_offset_(base_offset), file_(std::make_unique<detail::IndexFile>(std::move(path), kEntrySize)) {
  file_->open(max_bytes, writable);
  size_t n = file_->entries();
  // Drop the zero tail of a preallocated file left by a crash.
  while (n > 1 && load_be64(file_->entry(n - 1)) == 0 && load_be32(file_->entry(n - 1) + 8) == 0) --n;
  file_->truncate_entries(n);
}

TimeIndex::~TimeIndex() = default;

size_t TimeIndex::entries() const { return file_->entries(); }
bool TimeIndex::full() const { return file_->full(); }
int TimeIndex::reserve(size_t n) { return file_->reserve(n); }

TimestampOffset TimeIndex::entry(size_t i) const {
  const std::byte* p = file_->entry(i);
  return {static_cast<int64_t>(load_be64(p)), base_offset_ + load_be32(p + 8)};
}

std::optional<TimestampOffset> TimeIndex::last_entry() const {
  if (entries() == 0) return std::nullopt;
  return entry(entries() - 1);
}

bool TimeIndex::maybe_append(int64_t timestamp, int64_t offset) {
  if (file_->full()) return false;
  int64_t rel = offset - base_offset_;
  if (rel < 0 || rel > INT32_MAX) return false;
  if (auto last = last_entry(); last && (timestamp <= last->timestamp || offset < last->offset)) return false;
  std::byte* p = file_->append_slot();
  if (!p) return false;  // the disk is full: the entry is left out, as when the index is full
  detail::store_be64(p, static_cast<uint64_t>(timestamp));
  detail::store_be32(p + 8, static_cast<uint32_t>(rel));
  return true;
}

std::optional<TimestampOffset> TimeIndex::lookup_below(int64_t timestamp) const {
  size_t lo = 0, hi = entries();
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (static_cast<int64_t>(load_be64(file_->entry(mid))) < timestamp) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return std::nullopt;
  return entry(lo - 1);
}

void TimeIndex::truncate_to(int64_t offset) {
  size_t n = entries();
  while (n > 0 && entry(n - 1).offset >= offset) --n;
  file_->truncate_entries(n);
}

bool TimeIndex::sane(int64_t next_offset) const {
  if (file_->file_size_at_open() % kEntrySize != 0) return false;
  size_t n = entries();
  for (size_t i = 0; i < n; ++i) {
    auto e = entry(i);
    if (e.offset >= next_offset) return false;
    if (i > 0) {
      auto prev = entry(i - 1);
      if (e.timestamp <= prev.timestamp || e.offset < prev.offset) return false;
    }
  }
  return true;
}

void TimeIndex::make_read_only() { file_->make_read_only(); }
void TimeIndex::flush() { file_->flush(); }
void TimeIndex::release() { file_->release(); }
void TimeIndex::close() { file_->close(); }
void TimeIndex::rename_to(const std::filesystem::path& p) { file_->rename_to(p); }
const std::filesystem::path& TimeIndex::path() const { return file_->path(); }

}  // namespace brokerd::storage
