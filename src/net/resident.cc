#include "brokerd/net/resident.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <optional>
#include <system_error>
#include <vector>

#include "brokerd/net/blocking_pool.h"

namespace brokerd::net {

namespace {

struct ByteRange {
  uint64_t position;
  uint64_t size;
};

uint64_t page_size() {
  static const uint64_t size = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// The smallest range covering every page of the input that is not in the page cache:
// nullopt when all are resident, the whole input when residency cannot be checked.
// mincore over a fresh, never-touched mapping asks the page cache without reading the disk
// and costs three syscalls whatever the size, cheaper than probing with preadv2(RWF_NOWAIT),
// which would copy the data.
std::optional<ByteRange> cold_range(int fd, uint64_t position, uint64_t size) {
  if (size == 0) return std::nullopt;
  const uint64_t page = page_size();
  const uint64_t start = position & ~(page - 1);
  const uint64_t length = position + size - start;
  void* map = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(start));
  if (map == MAP_FAILED) return ByteRange{position, size};
  const size_t pages = (length + page - 1) / page;
  unsigned char small[1024];
  std::unique_ptr<unsigned char[]> large;
  unsigned char* vec = small;
  if (pages > sizeof(small)) {
    large = std::make_unique_for_overwrite<unsigned char[]>(pages);
    vec = large.get();
  }
  const int rc = ::mincore(map, length, vec);
  ::munmap(map, length);
  if (rc != 0) return ByteRange{position, size};

  size_t first = pages;
  size_t last = 0;
  for (size_t i = 0; i < pages; ++i) {
    if ((vec[i] & 1) == 0) {
      if (first == pages) first = i;
      last = i;
    }
  }
  if (first == pages) return std::nullopt;
  const uint64_t from = std::max(position, start + first * page);
  const uint64_t to = std::min(position + size, start + (last + 1) * page);
  return ByteRange{from, to - from};
}

}  // namespace

bool is_resident(int fd, uint64_t position, uint64_t size) {
  return !cold_range(fd, position, size).has_value();
}

void fault_in(int fd, uint64_t position, uint64_t size) {
  // Reading through a scratch buffer is what pulls the pages in; the bytes are discarded.
  constexpr size_t kScratch = 256 * 1024;
  thread_local std::unique_ptr<char[]> scratch = std::make_unique_for_overwrite<char[]>(kScratch);
  uint64_t done = 0;
  while (done < size) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(kScratch, size - done));
    const ssize_t n = ::pread(fd, scratch.get(), want, static_cast<off_t>(position + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "pread");
    }
    if (n == 0) return;  // past the end of the file: sendfile will notice the short file
    done += static_cast<uint64_t>(n);
  }
}

boost::asio::awaitable<void> ensure_resident(BlockingPool& pool, const brokerd::FileSlice& slice) {
  const int fd = slice.file->fd();
  auto cold = cold_range(fd, slice.position, slice.size);
  if (!cold) co_return;
  // The handle is captured so the file stays open even if the slice's owner lets go. The
  // lambda is named first: GCC 12 destroys a capturing lambda written inside a co_await
  // expression twice.
  auto read = [file = slice.file, range = *cold] { fault_in(file->fd(), range.position, range.size); };
  co_await pool.run(std::move(read));
}

}  // namespace brokerd::net
