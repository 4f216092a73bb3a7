#include "brokerd/storage/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace brokerd::storage {
namespace fs = std::filesystem;

namespace {

constexpr const char* kLockFile = ".lock";

std::string read_holder(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

}  // namespace

DirLock DirLock::acquire(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create data directory " + dir.string() + ": " + ec.message());
  const fs::path path = dir / kLockFile;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    const int err = errno;
    std::string holder = read_holder(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      throw std::runtime_error("data directory " + dir.string() + " is in use by another process" +
                               (holder.empty() ? std::string() : " (pid " + holder + ")") + ": it holds " +
                               path.string());
    }
    throw std::runtime_error("cannot lock " + path.string() + ": " + std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
  }
  return DirLock(fd);
}

DirLock::~DirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays (deleting it would race a new holder)
}

std::vector<DirLock> lock_dirs(const std::vector<fs::path>& dirs) {
  std::vector<DirLock> locks;
  std::vector<fs::path> seen;
  for (const auto& d : dirs) {
    auto canonical = fs::weakly_canonical(d);
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) continue;
    seen.push_back(canonical);
    locks.push_back(DirLock::acquire(d));
  }
  return locks;
}

}  // namespace brokerd::storage
