#pragma once
// The sparse .index file of a segment: 8-byte entries (offset relative to the segment's
// base as int32, file position as int32, both big-endian as Kafka writes them).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

namespace brokerd::storage {

namespace detail {
class IndexFile;
}

struct OffsetPosition {
  int64_t offset = 0;
  uint32_t position = 0;
};

class OffsetIndex {
 public:
  static constexpr size_t kEntrySize = 8;

  // Opens (creating if missing) the index of the segment starting at base_offset.
  OffsetIndex(std::filesystem::path path, int64_t base_offset, size_t max_bytes, bool writable);
  ~OffsetIndex();

  // Appends an entry; offsets must increase. Returns false when full, not increasing, or
  // when the disk has no room for its page (see reserve()).
  bool append(int64_t offset, uint32_t position);
  // The last entry with offset <= target, or {base_offset, 0} if none.
  OffsetPosition lookup(int64_t target) const;
  // Removes entries with offset >= offset.
  void truncate_to(int64_t offset);
  void reset() { truncate_to(base_offset_); }

  size_t entries() const;
  bool full() const;
  // Allocates the disk blocks of the next n entries: 0, or the errno (ENOSPC) when the
  // file system has no room. An append without room leaves its entry out.
  int reserve(size_t n);
  OffsetPosition entry(size_t i) const;
  std::optional<OffsetPosition> last_entry() const;
  int64_t base_offset() const { return base_offset_; }
  // Cheap structural check: offsets strictly increase, positions do not decrease and stay
  // below segment_size. False means the index must be rebuilt.
  bool sane(uint64_t segment_size) const;

  void make_read_only();
  void flush();
  void close();
  void release();  // unmaps until the next use
  void rename_to(const std::filesystem::path& p);
  const std::filesystem::path& path() const;

 private:
  int64_t base_offset_;
  std::unique_ptr<detail::IndexFile> file_;
};

}  // namespace brokerd::storage
