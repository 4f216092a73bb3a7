#pragma once
// Helpers shared by the storage tests: temp dirs, batch factories, reading file slices.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "brokerd/protocol/records.h"
#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage::testing {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("brokerd-storage-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A batch of `n` records with values of `value_size` bytes, timestamps ts, ts+1, ...
inline Bytes make_batch(int n, size_t value_size = 100, int64_t ts = 1000, Compression c = Compression::none) {
  BatchOptions o;
  o.compression = c;
  BatchBuilder b(o);
  for (int i = 0; i < n; ++i) {
    std::string key = "key-" + std::to_string(i);
    std::string value(value_size, static_cast<char>('a' + i % 26));
    b.add(ts + i, key, value);
  }
  return b.build();
}

inline Bytes read_all(const protocol::Records& r) {
  Bytes out;
  for (const auto& part : r.parts) {
    if (auto* s = std::get_if<SharedBytes>(&part)) {
      out.insert(out.end(), s->data.begin(), s->data.end());
    } else {
      const auto& f = std::get<FileSlice>(part);
      size_t at = out.size();
      out.resize(at + f.size);
      size_t done = 0;
      while (done < f.size) {
        ssize_t n = ::pread(f.file->fd(), out.data() + at + done, f.size - done, static_cast<off_t>(f.position + done));
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
      out.resize(at + done);
    }
  }
  return out;
}

// Base offsets of the batches in a byte stream.
inline std::vector<int64_t> batch_bases(std::span<const std::byte> bytes) {
  std::vector<int64_t> out;
  size_t pos = 0;
  while (pos + batch_layout::header_size <= bytes.size()) {
    RecordBatchView v(bytes.subspan(pos));
    out.push_back(v.base_offset());
    pos += v.size();
  }
  return out;
}

constexpr int64_t kNow = 1'700'000'000'000;

// Small segments and dense indexes, no retention, files deleted at once.
inline LogConfig small_config() {
  LogConfig c;
  c.segment_bytes = 4096;
  c.index_interval_bytes = 256;
  c.file_delete_delay_ms = 0;
  c.retention_ms = -1;
  return c;
}

// Appends one batch of n records (leader epoch 5).
inline AppendResult append(Log& log, int n, size_t value_size = 100, int64_t ts = 1000, int64_t now = kNow) {
  Bytes b = make_batch(n, value_size, ts);
  return log.append(b, 5, now);
}

}  // namespace brokerd::storage::testing
