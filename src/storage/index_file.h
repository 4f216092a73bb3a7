#pragma once
// A file of fixed-size index entries, preallocated and memory-mapped while it is written,
// trimmed to its entries when its segment stops being active. It holds no file descriptor:
// the mapping outlives the descriptor it was made from.
//
// The file is grown sparse, but no entry is written into a page whose blocks the file
// system has not allocated: a store into such a page on a full file system raises SIGBUS
// instead of failing. reserve() allocates them (a page at a time) and reports ENOSPC.
#include <cstddef>
#include <cstdint>
#include <filesystem>

namespace brokerd::storage::detail {

class IndexFile {
 public:
  IndexFile(std::filesystem::path path, size_t entry_size) : path_(std::move(path)), entry_size_(entry_size) {}
  ~IndexFile();
  IndexFile(const IndexFile&) = delete;
  IndexFile& operator=(const IndexFile&) = delete;

  // Opens or creates the file. A writable index is grown to `max_bytes` (sparse) so
  // appends need no syscall. Throws std::system_error on I/O failure.
  void open(size_t max_bytes, bool writable);
  // Allocates the file system blocks of the next `n` entries (within capacity), so that
  // appending them cannot fault. Returns 0, or the errno (ENOSPC) with nothing appended.
  int reserve(size_t n) noexcept;
  // Drops the preallocated tail, unmaps, and reopens read-only on demand. Never throws.
  void make_read_only() noexcept;
  void flush();
  void close() noexcept;
  // Unmaps (memory and a map count back to the system); the next use maps again.
  void release() noexcept;
  bool mapped() const { return map_ != nullptr; }
  // Renames the file (suffix change on delete); the mapping stays valid.
  void rename_to(const std::filesystem::path& p);

  size_t entries() const { return entries_; }
  size_t capacity() const { return capacity_; }
  bool full() const { return entries_ >= capacity_; }
  const std::byte* entry(size_t i) const;
  // The next entry's bytes for the caller to fill, or nullptr when its page cannot be
  // allocated (the disk is full).
  std::byte* append_slot();
  void truncate_entries(size_t n) { entries_ = std::min(n, entries_); }
  // Keeps only leading entries accepted by the caller's sanity check.
  const std::filesystem::path& path() const { return path_; }
  // Size in bytes the file had when opened (before preallocation).
  size_t file_size_at_open() const { return size_at_open_; }

 private:
  void map_fd(int fd, size_t bytes, bool writable) const;
  void unmap() const;
  void ensure_mapped() const;
  int allocate(int fd, size_t from, size_t to) const;

  std::filesystem::path path_;
  size_t entry_size_;
  bool open_ = false;
  bool writable_ = false;
  bool unsynced_ = false;  // entries appended since the last flush
  mutable size_t file_bytes_ = 0;  // the file's size as this object left it
  size_t entries_ = 0;
  size_t capacity_ = 0;
  size_t size_at_open_ = 0;
  size_t allocated_ = 0;  // bytes from the start known to have their blocks allocated
  mutable std::byte* map_ = nullptr;
  mutable size_t map_size_ = 0;
};

}  // namespace brokerd::storage::detail
