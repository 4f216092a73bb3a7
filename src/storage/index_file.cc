#include "index_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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
  Fd f{::open(path_.c_str(), (writable ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw_errno("open", path_);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw_errno("fstat", path_);
  size_at_open_ = static_cast<size_t>(st.st_size);
  entries_ = size_at_open_ / entry_size_;
  if (writable) {
    size_t cap = std::max(max_bytes / entry_size_, entries_);
    if (cap * entry_size_ != size_at_open_ && ::ftruncate(f.fd, static_cast<off_t>(cap * entry_size_)) != 0)
      throw_errno("ftruncate", path_);
    if (cap > 0) map_fd(f.fd, cap * entry_size_, true);
    capacity_ = cap;
  } else {
    capacity_ = entries_;
  }
  writable_ = writable;
  open_ = true;
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

const std::byte* IndexFile::entry(size_t i) const {
  if (!map_) {  // closed segments map lazily
    Fd f{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throw_errno("open", path_);
    map_fd(f.fd, entries_ * entry_size_, false);
  }
  return map_ + i * entry_size_;
}

std::byte* IndexFile::append_slot() {
  std::byte* p = map_ + entries_ * entry_size_;
  ++entries_;
  return p;
}

void IndexFile::make_read_only() noexcept {
  if (!open_) return;
  unmap();
  // A file left longer than its entries is still correct: opening trims trailing zero
  // entries, as after a crash. So a failed trim is logged, never thrown (this runs in
  // destructors).
  if (writable_ && ::truncate(path_.c_str(), static_cast<off_t>(entries_ * entry_size_)) != 0)
    module_logger("storage")->warn("trimming index {} failed: {}", path_.string(), std::strerror(errno));
  writable_ = false;
  capacity_ = entries_;
}

void IndexFile::flush() {
  if (map_ && writable_) ::msync(map_, map_size_, MS_SYNC);
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
