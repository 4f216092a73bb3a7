#pragma once
// Byte views that keep their backing storage alive, and file slices sent with sendfile.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <variant>
#include <vector>

namespace brokerd {

using Bytes = std::vector<std::byte>;

// A view into bytes owned by someone else (a request frame, a cache), kept alive by `owner`.
struct SharedBytes {
  std::shared_ptr<const void> owner;
  std::span<const std::byte> data;

  static SharedBytes copy_of(std::span<const std::byte> src) {
    auto buf = std::make_shared<Bytes>(src.begin(), src.end());
    return SharedBytes{buf, std::span<const std::byte>(buf->data(), buf->size())};
  }
  size_t size() const { return data.size(); }
};

// An open file descriptor, closed when the last holder lets go (so a segment deleted by
// retention stays readable for a response already being sent).
class FileHandle {
 public:
  explicit FileHandle(int fd) : fd_(fd) {}
  ~FileHandle();
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// A byte range of a file, sent to a socket with sendfile.
struct FileSlice {
  std::shared_ptr<const FileHandle> file;
  uint64_t position = 0;
  uint32_t size = 0;
};

inline size_t byte_size(const SharedBytes& b) { return b.size(); }
inline size_t byte_size(const FileSlice& f) { return f.size; }
inline size_t byte_size(const Bytes& b) { return b.size(); }

// One piece of an encoded message: bytes the encoder wrote, borrowed bytes, or a file range.
using OutChunk = std::variant<Bytes, SharedBytes, FileSlice>;

inline size_t chunk_size(const OutChunk& c) {
  return std::visit([](const auto& v) { return byte_size(v); }, c);
}

}  // namespace brokerd
