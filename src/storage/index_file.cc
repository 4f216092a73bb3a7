#include "index_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>

#include "brokerd/common/logger.h"

namespace brokerd::storage::detail {
namespace {
[[noreturn]] void throw_errno(const char* what, const std::filesystem::path& p) {
  throw std::system_error(errno, std::generic_category(), std::string(what) + " " + p.string());
}
}  // namespace

IndexFile::~IndexFile() { close(); }  // close() never throws

namespace {
// A descriptor for the length of one call: an index holds none once mapped.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};
}  // namespace

void IndexFile::open(size_t max_bytes, bool writable) {
  close();
  // Its size is all an open needs (the file is opened when first mapped): one stat, unless
  // a writable index must be created.
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    if (errno != ENOENT || !writable) throw_errno("stat", path_);
    Fd f{::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)};
    if (f.fd < 0) throw_errno("open", path_);
    st = {};
  }
  size_at_open_ = static_cast<size_t>(st.st_size);
  file_bytes_ = size_at_open_;
  allocated_ = 0;  // a file left by a crash may be sparse anywhere past its entries
  entries_ = size_at_open_ / entry_size_;
  capacity_ = writable ? std::max(max_bytes / entry_size_, entries_) : entries_;
  writable_ = writable;
  open_ = true;
  // A writable index grows to its capacity when first mapped (an idle one never is).
  if (writable && entries_ > 0) ensure_mapped();
}

void IndexFile::map_fd(int fd, size_t bytes, bool writable) const {
  void* p = ::mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw_errno("mmap", path_);
  // Entries are appended one page at a time and looked up by binary search: readahead would
  // only zero-fill pages of the sparse tail long before they are used.
  ::madvise(p, bytes, MADV_RANDOM);
  map_ = static_cast<std::byte*>(p);
  map_size_ = bytes;
}

void IndexFile::unmap() const {
  if (map_) ::munmap(map_, map_size_);
  map_ = nullptr;
  map_size_ = 0;
}

void IndexFile::ensure_mapped() const {
  if (map_) return;
  // Closed segments map at their first lookup; any index maps again after release().
  const size_t bytes = (writable_ ? capacity_ : entries_) * entry_size_;
  if (bytes == 0) return;
  Fd f{::open(path_.c_str(), (writable_ ? O_RDWR : O_RDONLY) | O_CLOEXEC)};
  if (f.fd < 0) throw_errno("open", path_);
  if (writable_ && file_bytes_ != bytes) {  // sparse: appends then need no syscall
    if (::ftruncate(f.fd, static_cast<off_t>(bytes)) != 0) throw_errno("ftruncate", path_);
    file_bytes_ = bytes;
  }
  map_fd(f.fd, bytes, writable_);
}

const std::byte* IndexFile::entry(size_t i) const {
  ensure_mapped();
  return map_ + i * entry_size_;
}

int IndexFile::reserve(size_t n) noexcept {
  if (!writable_) return 0;
  const size_t want = std::min(entries_ + n, capacity_) * entry_size_;
  if (want <= allocated_) return 0;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t to = std::min((want + page - 1) / page * page, capacity_ * entry_size_);
  Fd f{::open(path_.c_str(), O_RDWR | O_CLOEXEC)};
  if (f.fd < 0) return errno;
  if (int err = allocate(f.fd, allocated_, to); err != 0) return err;
  allocated_ = to;
  // Not yet mapped, the file grew to `to`; the first mapping grows it to its capacity.
  file_bytes_ = std::max(file_bytes_, to);
  return 0;
}

int IndexFile::allocate(int fd, size_t from, size_t to) const {
  while (::fallocate(fd, 0, static_cast<off_t>(from), static_cast<off_t>(to - from)) != 0) {
    if (errno == EINTR) continue;
    if (errno != EOPNOTSUPP) return errno;
    // No fallocate on this file system: writing the bytes takes their blocks. Only bytes
    // past the entries are written; nothing there is read.
    static const std::byte zeros[4096]{};
    for (size_t at = std::max(from, entries_ * entry_size_); at < to;) {
      ssize_t w = ::pwrite(fd, zeros, std::min(sizeof(zeros), to - at), static_cast<off_t>(at));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return w < 0 ? errno : EIO;
      at += static_cast<size_t>(w);
    }
    return 0;
  }
  return 0;
}

std::byte* IndexFile::append_slot() {
  if (reserve(1) != 0) return nullptr;
  ensure_mapped();
  std::byte* p = map_ + entries_ * entry_size_;
  ++entries_;
  unsynced_ = true;
  return p;
}

void IndexFile::release() noexcept {
  unmap();  // dirty pages stay in the page cache; flush() syncs them through the file
}

void IndexFile::make_read_only() noexcept {
  if (!open_) return;
  unmap();
  // A file left longer than its entries is still correct: opening trims trailing zero
  // entries, as after a crash. So a failed trim is logged, never thrown (this runs in
  // destructors).
  if (writable_ && file_bytes_ != entries_ * entry_size_) {
    if (::truncate(path_.c_str(), static_cast<off_t>(entries_ * entry_size_)) == 0) file_bytes_ = entries_ * entry_size_;
    else module_logger("storage")->warn("trimming index {} failed: {}", path_.string(), std::strerror(errno));
  }
  writable_ = false;
  capacity_ = entries_;
}

void IndexFile::flush() {
  if (!writable_ || !unsynced_) return;
  if (map_) {
    ::msync(map_, map_size_, MS_SYNC);
  } else {
    Fd f{::open(path_.c_str(), O_RDWR | O_CLOEXEC)};
    if (f.fd >= 0) ::fdatasync(f.fd);
  }
  unsynced_ = false;
}

void IndexFile::close() noexcept {
  if (!open_) return;
  if (writable_) make_read_only();
  unmap();
  open_ = false;
}

void IndexFile::rename_to(const std::filesystem::path& p) {
  std::error_code ec;
  std::filesystem::rename(path_, p, ec);
  path_ = p;
}

}  // namespace brokerd::storage::detail
