#include "brokerd/storage/offset_index.h"

#include "index_file.h"
#include "varint.h"

namespace brokerd::storage {

using detail::load_be32;
using detail::store_be32;

OffsetIndex::OffsetIndex(std::filesystem::path path, int64_t base_offset, size_t max_bytes, bool writable)
    : base_offset_(base_offset), file_(std::make_unique<detail::IndexFile>(std::move(path), kEntrySize)) {
  file_->open(max_bytes, writable);
  // A preallocated file left by a crash ends in zero entries; only the first entry may
  // legitimately be (0, 0).
  size_t n = file_->entries();
  while (n > 1 && load_be32(file_->entry(n - 1)) == 0 && load_be32(file_->entry(n - 1) + 4) == 0) --n;
  file_->truncate_entries(n);
}

OffsetIndex::~OffsetIndex() = default;

size_t OffsetIndex::entries() const { return file_->entries(); }
bool OffsetIndex::full() const { return file_->full(); }
int OffsetIndex::reserve(size_t n) { return file_->reserve(n); }

OffsetPosition OffsetIndex::entry(size_t i) const {
  const std::byte* p = file_->entry(i);
  return {base_offset_ + load_be32(p), load_be32(p + 4)};
}

std::optional<OffsetPosition> OffsetIndex::last_entry() const {
  if (entries() == 0) return std::nullopt;
  return entry(entries() - 1);
}

bool OffsetIndex::append(int64_t offset, uint32_t position) {
  if (file_->full()) return false;
  int64_t rel = offset - base_offset_;
  if (rel < 0 || rel > INT32_MAX) return false;
  if (auto last = last_entry(); last && (offset <= last->offset || position < last->position)) return false;
  std::byte* p = file_->append_slot();
  if (!p) return false;  // the disk is full: the entry is left out, as when the index is full
  store_be32(p, static_cast<uint32_t>(rel));
  store_be32(p + 4, position);
  return true;
}

OffsetPosition OffsetIndex::lookup(int64_t target) const {
  size_t n = entries();
  if (n == 0 || target < base_offset_) return {base_offset_, 0};
  uint32_t rel = static_cast<uint32_t>(std::min<int64_t>(target - base_offset_, INT32_MAX));
  // Binary search for the last entry with relative offset <= rel.
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (load_be32(file_->entry(mid)) <= rel) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return {base_offset_, 0};
  return entry(lo - 1);
}

void OffsetIndex::truncate_to(int64_t offset) {
  size_t n = entries();
  while (n > 0 && entry(n - 1).offset >= offset) --n;
  file_->truncate_entries(n);
}

bool OffsetIndex::sane(uint64_t segment_size) const {
  size_t n = entries();
  if (file_->file_size_at_open() % kEntrySize != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    auto e = entry(i);
    if (e.position >= segment_size) return false;
    if (i > 0) {
      auto prev = entry(i - 1);
      if (e.offset <= prev.offset || e.position < prev.position) return false;
    }
  }
  return true;
}

void OffsetIndex::make_read_only() { file_->make_read_only(); }
void OffsetIndex::flush() { file_->flush(); }
void OffsetIndex::release() { file_->release(); }
void OffsetIndex::close() { file_->close(); }
void OffsetIndex::rename_to(const std::filesystem::path& p) { file_->rename_to(p); }
const std::filesystem::path& OffsetIndex::path() const { return file_->path(); }

}  // namespace brokerd::storage
