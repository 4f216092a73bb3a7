#pragma once
// The sparse .timeindex file of a segment: 12-byte entries (timestamp int64, offset
// relative to the segment's base int32, big-endian). Timestamps only increase.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>

namespace brokerd::storage {

namespace detail {
class IndexFile;
}

struct TimestampOffset {
  int64_t timestamp = -1;
  int64_t offset = 0;
};

class TimeIndex {
 public:
  static constexpr size_t kEntrySize = 12;

  TimeIndex(std::filesystem::path path, int64_t base_offset, size_t max_bytes, bool writable);
  ~TimeIndex();

  // Appends when timestamp is larger than the last entry's (else ignored, returns false).
  bool maybe_append(int64_t timestamp, int64_t offset);
  // The last entry whose timestamp is strictly below `timestamp` (no record at or before
  // its offset can have a timestamp >= `timestamp`), or nullopt.
  std::optional<TimestampOffset> lookup_below(int64_t timestamp) const;
  void truncate_to(int64_t offset);  // removes entries with offset >= offset

  size_t entries() const;
  bool full() const;
  // Allocates the disk blocks of the next n entries: 0, or the errno (ENOSPC) when the
  // file system has no room. An append without room leaves its entry out.
  int reserve(size_t n);
  TimestampOffset entry(size_t i) const;
  std::optional<TimestampOffset> last_entry() const;
  bool sane(int64_t next_offset) const;

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
