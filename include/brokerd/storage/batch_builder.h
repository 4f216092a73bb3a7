#pragma once
// Builds RecordBatch v2 bytes from records, with any codec. Used by tests, tools and the
// compaction cleaner (which rewrites batches keeping their producer fields).
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage {

struct BatchOptions {
  Compression compression = Compression::none;
  int64_t base_offset = 0;
  int32_t partition_leader_epoch = -1;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  bool transactional = false;
  bool control = false;
  TimestampType timestamp_type = TimestampType::create_time;
};

class BatchBuilder {
 public:
  explicit BatchBuilder(BatchOptions opts = {}) : opts_(opts) {}

  // Appends a record; its offset delta is the next one unless given (compaction keeps gaps).
  void add(int64_t timestamp, std::optional<std::span<const std::byte>> key,
           std::optional<std::span<const std::byte>> value, std::span<const RecordHeader> headers = {},
           std::optional<int32_t> offset_delta = std::nullopt);
  // Convenience for text keys and values.
  void add(int64_t timestamp, std::string_view key, std::string_view value);

  int32_t count() const { return static_cast<int32_t>(records_.size()); }
  bool empty() const { return records_.empty(); }
  size_t estimated_size() const { return batch_layout::header_size + body_size_; }

  // The finished batch, CRC included.
  Bytes build() const;

 private:
  struct Pending {
    int64_t timestamp;
    int32_t offset_delta;
    std::optional<Bytes> key, value;
    std::vector<std::pair<Bytes, std::optional<Bytes>>> headers;
  };
  BatchOptions opts_;
  std::vector<Pending> records_;
  size_t body_size_ = 0;
};

// Text as bytes, for tests and tools.
inline std::span<const std::byte> as_bytes(std::string_view s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

}  // namespace brokerd::storage
