#pragma once
// One process per data directory: an exclusive flock on `<dir>/.lock`, held for the life of
// the process (the kernel drops it when the process dies, however it dies). The file names
// the holder's pid so that a refused start can say who holds it.
#include <filesystem>
#include <vector>

namespace brokerd::storage {

class DirLock {
 public:
  // Creates the directory if needed and locks it. Throws std::runtime_error naming the
  // directory, and the pid that holds it when another process does.
  static DirLock acquire(const std::filesystem::path& dir);
  DirLock(DirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirLock& operator=(DirLock&&) = delete;
  DirLock(const DirLock&) = delete;
  ~DirLock();

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_;
};

// Locks each distinct directory of `dirs`, in order.
std::vector<DirLock> lock_dirs(const std::vector<std::filesystem::path>& dirs);

}  // namespace brokerd::storage
