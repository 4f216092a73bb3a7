#pragma once
// A zero-copy view over RecordBatch v2 bytes (the same layout on the wire and on disk),
// iteration over its records, and validation of a produce payload.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/storage/compression.h"

namespace brokerd::storage {

using ErrorCode = brokerd::protocol::ErrorCode;

enum class TimestampType : uint8_t { create_time = 0, log_append_time = 1 };

namespace batch_layout {
constexpr size_t base_offset = 0;
constexpr size_t batch_length = 8;
constexpr size_t partition_leader_epoch = 12;
constexpr size_t magic = 16;
constexpr size_t crc = 17;
constexpr size_t attributes = 21;
constexpr size_t last_offset_delta = 23;
constexpr size_t base_timestamp = 27;
constexpr size_t max_timestamp = 35;
constexpr size_t producer_id = 43;
constexpr size_t producer_epoch = 51;
constexpr size_t base_sequence = 53;
constexpr size_t records_count = 57;
constexpr size_t header_size = 61;
// Enough to read baseOffset, batchLength and magic of a batch of any version.
constexpr size_t log_overhead = 12;
}  // namespace batch_layout

namespace batch_attr {
constexpr uint16_t codec_mask = 0x07;
constexpr uint16_t timestamp_type = 0x08;
constexpr uint16_t transactional = 0x10;
constexpr uint16_t control = 0x20;
constexpr uint16_t delete_horizon = 0x40;
}  // namespace batch_attr

struct RecordHeader {
  std::span<const std::byte> key;
  std::optional<std::span<const std::byte>> value;  // nullopt = null
};

// One record of a batch; spans point into the batch or into the reader's decompressed buffer.
struct Record {
  int8_t attributes = 0;
  int64_t offset = 0;
  int64_t timestamp = 0;
  std::optional<std::span<const std::byte>> key;
  std::optional<std::span<const std::byte>> value;
  std::vector<RecordHeader> headers;
};

// Read-only view. The caller guarantees at least header_size bytes and, for record
// access, the whole batch (size() bytes); validate_batches() checks both.
class RecordBatchView {
 public:
  explicit RecordBatchView(std::span<const std::byte> bytes) : bytes_(bytes) {}

  int64_t base_offset() const;
  int32_t batch_length() const;
  size_t size() const { return static_cast<size_t>(batch_length()) + batch_layout::log_overhead; }
  int32_t partition_leader_epoch() const;
  int8_t magic() const;
  uint32_t crc() const;
  int16_t attributes() const;
  int32_t last_offset_delta() const;
  int64_t base_timestamp() const;
  int64_t max_timestamp() const;
  int64_t producer_id() const;
  int16_t producer_epoch() const;
  int32_t base_sequence() const;
  int32_t records_count() const;

  int64_t last_offset() const { return base_offset() + last_offset_delta(); }
  int64_t next_offset() const { return last_offset() + 1; }
  Compression compression() const { return static_cast<Compression>(attributes() & batch_attr::codec_mask); }
  TimestampType timestamp_type() const {
    return (attributes() & batch_attr::timestamp_type) ? TimestampType::log_append_time : TimestampType::create_time;
  }
  bool is_transactional() const { return attributes() & batch_attr::transactional; }
  bool is_control() const { return attributes() & batch_attr::control; }

  // CRC-32C over attributes..end, as stored in the header.
  uint32_t compute_crc() const;
  bool crc_valid() const { return crc() == compute_crc(); }

  std::span<const std::byte> bytes() const { return bytes_.first(std::min(bytes_.size(), size())); }
  // The records section (compressed if the batch is).
  std::span<const std::byte> records_data() const { return bytes().subspan(batch_layout::header_size); }

 protected:
  std::span<const std::byte> bytes_;
};

// A view over bytes the caller may change: the broker assigns offsets and leader epochs
// in place (both lie outside the CRC) and may stamp LogAppendTime.
class MutableRecordBatchView : public RecordBatchView {
 public:
  explicit MutableRecordBatchView(std::span<std::byte> bytes) : RecordBatchView(bytes), mut_(bytes) {}
  void set_base_offset(int64_t offset);
  void set_partition_leader_epoch(int32_t epoch);
  // Sets the timestamp-type bit and maxTimestamp, then recomputes the CRC.
  void set_log_append_time(int64_t timestamp_ms);
  void set_crc(uint32_t crc);

 private:
  std::span<std::byte> mut_;
};

constexpr size_t kDefaultMaxDecompressedBytes = 64u << 20;

// Iterates the records of one batch, decompressing once if needed. Record timestamps are
// reported as baseTimestamp + delta for CreateTime and maxTimestamp for LogAppendTime.
class RecordReader {
 public:
  explicit RecordReader(const RecordBatchView& batch, size_t max_decompressed = kDefaultMaxDecompressedBytes);
  // Fills `r` with the next record; false at the end or on error (see error()).
  bool next(Record& r);
  ErrorCode error() const { return error_; }
  int32_t records_read() const { return read_; }

 private:
  RecordBatchView batch_;
  Bytes decompressed_;
  const std::byte* pos_ = nullptr;
  const std::byte* end_ = nullptr;
  int32_t read_ = 0;
  ErrorCode error_ = ErrorCode::none;
};

struct BatchLimits {
  size_t max_batch_bytes = 1048588;  // max.message.bytes
  size_t max_decompressed_bytes = kDefaultMaxDecompressedBytes;
  bool check_crc = true;
  bool check_records = true;  // walk record framing (and decompress compressed batches)
  // Records without a key are refused (compacted topics); needs check_records.
  bool require_keys = false;
  // Batches already in the log: compaction leaves gaps between offset deltas and may keep
  // a batch with no records (an idempotent producer's last one).
  bool stored = false;
  // Every record's timestamp must lie within [earliest_timestamp, latest_timestamp]
  // (message.timestamp.before/after.max.ms of a CreateTime topic); needs check_records.
  int64_t earliest_timestamp = INT64_MIN;
  int64_t latest_timestamp = INT64_MAX;
  // A client's batch (Produce), which must not be a control batch, must give an idempotent
  // producer's batch a sequence, and needs a producer id when transactional.
  bool from_client = false;
  // Transactional batches are refused (INVALID_TXN_STATE): the append does not allow them.
  bool refuse_transactional = false;
  // The partition as records' errors name it ("topic-0"); needed with require_keys.
  std::string_view partition_name;
};

// What the append path needs to know of each batch, collected while validating.
struct BatchInfo {
  size_t position = 0;  // within the payload
  size_t size = 0;
  int32_t last_offset_delta = 0;
  int32_t records_count = 0;
  int64_t max_timestamp = -1;
  Compression compression = Compression::none;
};

// One record that failed its batch (KIP-467: ProduceResponse v8+ record_errors).
struct RecordError {
  int32_t index = 0;  // within its batch
  std::string message;
};

struct ValidationResult {
  ErrorCode error = ErrorCode::none;
  std::string message;       // why, for logs
  size_t valid_bytes = 0;    // bytes of leading batches that passed
  int32_t batch_count = 0;   // batches that passed
  int64_t record_count = 0;  // records in batches that passed
  // Every record that failed the batch (keys, timestamps), in order, when records did.
  std::vector<RecordError> record_errors;
  bool ok() const { return error == ErrorCode::none; }
};

// Splits a produce payload into batches and checks every one (magic 2, lengths, CRC,
// counts, record framing, size, codec). Errors: CORRUPT_MESSAGE (bad CRC, truncation,
// framing, records disagreeing with recordsCount), INVALID_RECORD (impossible header
// fields; records without a key where keys are required; from a client, a control batch or
// a producer id without a sequence, a transactional batch without a producer id),
// INVALID_TIMESTAMP (outside the limits' bounds), INVALID_TXN_STATE (a transactional batch
// under refuse_transactional), MESSAGE_TOO_LARGE,
// UNSUPPORTED_FOR_MESSAGE_FORMAT (magic < 2), UNSUPPORTED_COMPRESSION_TYPE. Stops at the
// first bad batch; within it, every bad record is listed.
ValidationResult validate_batches(std::span<const std::byte> payload, const BatchLimits& limits,
                                  std::vector<BatchInfo>* infos = nullptr);

// True when a produce payload carries bytes beyond its first batch (judged by that batch's
// length alone). Produce v3+ must carry exactly one batch per partition.
bool has_more_than_one_batch(std::span<const std::byte> payload);

// Checks a single batch that starts at `bytes` (which may hold more after it).
ValidationResult validate_batch(std::span<const std::byte> bytes, const BatchLimits& limits,
                                BatchInfo* info = nullptr);

}  // namespace brokerd::storage
