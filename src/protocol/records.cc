#include "brokerd/protocol/records.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace brokerd::protocol {

Bytes Records::to_bytes() const {
  Bytes out;
  out.reserve(size());
  for (const auto& part : parts) {
    if (const auto* s = std::get_if<SharedBytes>(&part)) {
      out.insert(out.end(), s->data.begin(), s->data.end());
      continue;
    }
    const auto& f = std::get<FileSlice>(part);
    size_t base = out.size();
    out.resize(base + f.size);
    size_t done = 0;
    while (done < f.size) {
      ssize_t n = ::pread(f.file->fd(), out.data() + base + done, f.size - done,
                          static_cast<off_t>(f.position + done));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error(std::string("pread: ") + std::strerror(errno));
      if (n == 0) throw std::runtime_error("pread: file slice past end of file");
      done += static_cast<size_t>(n);
    }
  }
  return out;
}

bool Records::operator==(const Records& o) const {
  if (is_null != o.is_null) return false;
  if (size() != o.size()) return false;
  return to_bytes() == o.to_bytes();
}

}  // namespace brokerd::protocol
