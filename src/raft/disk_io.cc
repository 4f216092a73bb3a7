#include "brokerd/raft/disk_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace brokerd::raft {

namespace {

[[noreturn]] void fail(const std::string& what, const std::filesystem::path& p) {
  throw std::system_error(errno, std::generic_category(), what + " " + p.string());
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

}  // namespace

void fsync_dir(const std::filesystem::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) fail("open", dir);
  if (::fsync(fd.get()) != 0) fail("fsync", dir);
}

void write_file_durably(const std::filesystem::path& path, std::string_view data,
                        std::string_view tmp_suffix) {
  std::filesystem::path tmp = path;
  tmp += std::string(tmp_suffix);
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) fail("open", tmp);
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd.get(), data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("write", tmp);
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd.get()) != 0) fail("fsync", tmp);
    if (::close(fd.release()) != 0) fail("close", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename", tmp);
  fsync_dir(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

std::optional<std::string> read_whole_file(const std::filesystem::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail("open", path);
  }
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("read", path);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

}  // namespace brokerd::raft
