#include "brokerd/storage/record_batch.h"

#include "brokerd/storage/crc32c.h"
#include "varint.h"

namespace brokerd::storage {

using namespace detail;
namespace L = batch_layout;

int64_t RecordBatchView::base_offset() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::base_offset)); }
int32_t RecordBatchView::batch_length() const { return static_cast<int32_t>(load_be32(bytes_.data() + L::batch_length)); }
int32_t RecordBatchView::partition_leader_epoch() const {
  return static_cast<int32_t>(load_be32(bytes_.data() + L::partition_leader_epoch));
}
int8_t RecordBatchView::magic() const { return static_cast<int8_t>(bytes_[L::magic]); }
uint32_t RecordBatchView::crc() const { return load_be32(bytes_.data() + L::crc); }
int16_t RecordBatchView::attributes() const { return static_cast<int16_t>(load_be16(bytes_.data() + L::attributes)); }
int32_t RecordBatchView::last_offset_delta() const {
  return static_cast<int32_t>(load_be32(bytes_.data() + L::last_offset_delta));
}
int64_t RecordBatchView::base_timestamp() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::base_timestamp)); }
int64_t RecordBatchView::max_timestamp() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::max_timestamp)); }
int64_t RecordBatchView::producer_id() const { return static_cast<int64_t>(load_be64(bytes_.data() + L::producer_id)); }
int16_t RecordBatchView::producer_epoch() const { return static_cast<int16_t>(load_be16(bytes_.data() + L::producer_epoch)); }
int32_t RecordBatchView::base_sequence() const { return static_cast<int32_t>(load_be32(bytes_.data() + L::base_sequence)); }
int32_t RecordBatchView::records_count() const { return static_cast<int32_t>(load_be32(bytes_.data() + L::records_count)); }

uint32_t RecordBatchView::compute_crc() const {
  auto b = bytes();
  if (b.size() < L::header_size) return 0;  // not a whole header: no CRC to speak of
  return crc32c(b.data() + L::attributes, b.size() - L::attributes);
}

void MutableRecordBatchView::set_base_offset(int64_t offset) {
  store_be64(mut_.data() + L::base_offset, static_cast<uint64_t>(offset));
}
void MutableRecordBatchView::set_partition_leader_epoch(int32_t epoch) {
  store_be32(mut_.data() + L::partition_leader_epoch, static_cast<uint32_t>(epoch));
}
void MutableRecordBatchView::set_crc(uint32_t crc) { store_be32(mut_.data() + L::crc, crc); }
void MutableRecordBatchView::set_log_append_time(int64_t timestamp_ms) {
  uint16_t attrs = static_cast<uint16_t>(attributes()) | batch_attr::timestamp_type;
  store_be16(mut_.data() + L::attributes, attrs);
  store_be64(mut_.data() + L::max_timestamp, static_cast<uint64_t>(timestamp_ms));
  set_crc(compute_crc());
}

namespace {

// Parses one record's framing. With `out`, fills it (headers included); without, only
// checks. Returns false on any framing error.
bool parse_record(const std::byte*& p, const std::byte* end, Record* out, int32_t& offset_delta, int64_t& ts_delta,
                  bool* null_key = nullptr) {
  int32_t len;
  if (!read_varint(p, end, len) || len < 1 || len > end - p) return false;
  const std::byte* rend = p + len;
  int8_t attrs = static_cast<int8_t>(*p++);
  int32_t key_len, value_len, header_count;
  if (!read_varlong(p, rend, ts_delta) || !read_varint(p, rend, offset_delta)) return false;
  if (!read_varint(p, rend, key_len) || key_len < -1 || key_len > rend - p) return false;
  const std::byte* key = p;
  if (key_len > 0) p += key_len;
  if (null_key) *null_key = key_len < 0;
  if (!read_varint(p, rend, value_len) || value_len < -1 || value_len > rend - p) return false;
  const std::byte* value = p;
  if (value_len > 0) p += value_len;
  if (!read_varint(p, rend, header_count) || header_count < 0 || header_count > rend - p) return false;
  if (out) {
    out->attributes = attrs;
    out->key = key_len < 0 ? std::nullopt : std::optional(std::span<const std::byte>(key, key_len));
    out->value = value_len < 0 ? std::nullopt : std::optional(std::span<const std::byte>(value, value_len));
    out->headers.clear();
  }
  for (int32_t i = 0; i < header_count; ++i) {
    int32_t hk, hv;
    if (!read_varint(p, rend, hk) || hk < 0 || hk > rend - p) return false;
    const std::byte* hkey = p;
    p += hk;
    if (!read_varint(p, rend, hv) || hv < -1 || hv > rend - p) return false;
    const std::byte* hval = p;
    if (hv > 0) p += hv;
    if (out) {
      out->headers.push_back(RecordHeader{
          std::span<const std::byte>(hkey, hk),
          hv < 0 ? std::nullopt : std::optional(std::span<const std::byte>(hval, hv))});
    }
  }
  if (p != rend) return false;  // the length must cover exactly the fields
  return true;
}

ErrorCode decompress_error(DecompressStatus st) {
  switch (st) {
    case DecompressStatus::ok: return ErrorCode::none;
    case DecompressStatus::too_large: return ErrorCode::invalid_record;
    case DecompressStatus::unsupported: return ErrorCode::unsupported_compression_type;
    case DecompressStatus::corrupt: break;
  }
  return ErrorCode::corrupt_message;
}

ValidationResult fail(ErrorCode e, std::string msg) {
  ValidationResult r;
  r.error = e;
  r.message = std::move(msg);
  return r;
}

// A batch failed by its records: INVALID_TIMESTAMP when a timestamp was among the reasons,
// else INVALID_RECORD, with Kafka's summary as the message.
ValidationResult record_errors(std::vector<RecordError> errors, bool timestamp_error) {
  if (timestamp_error) {
    auto r = fail(ErrorCode::invalid_timestamp, "One or more records have been rejected due to invalid timestamp");
    r.record_errors = std::move(errors);
    return r;
  }
  std::string shown;
  for (size_t k = 0; k < errors.size() && k < 3; ++k) {
    if (k) shown += ", ";
    shown += "RecordError(batchIndex=" + std::to_string(errors[k].index) + ", message='" + errors[k].message + "')";
  }
  auto r = fail(ErrorCode::invalid_record, "One or more records have been rejected due to " +
                                               std::to_string(errors.size()) +
                                               " record errors in total, and only showing the first three errors at "
                                               "most: [" + shown + "]");
  r.record_errors = std::move(errors);
  return r;
}

}  // namespace

RecordReader::RecordReader(const RecordBatchView& batch, size_t max_decompressed) : batch_(batch) {
  auto data = batch_.records_data();
  if (batch_.compression() == Compression::none) {
    pos_ = data.data();
    end_ = data.data() + data.size();
    return;
  }
  if (!valid_compression(static_cast<int>(batch_.compression()))) {
    error_ = ErrorCode::unsupported_compression_type;
    return;
  }
  auto st = decompress(batch_.compression(), data, max_decompressed, decompressed_);
  error_ = decompress_error(st);
  if (error_ == ErrorCode::none) {
    pos_ = decompressed_.data();
    end_ = decompressed_.data() + decompressed_.size();
  }
}

bool RecordReader::next(Record& r) {
  if (error_ != ErrorCode::none || read_ >= batch_.records_count()) return false;
  int32_t offset_delta;
  int64_t ts_delta;
  if (!parse_record(pos_, end_, &r, offset_delta, ts_delta)) {
    error_ = ErrorCode::corrupt_message;
    return false;
  }
  r.offset = batch_.base_offset() + offset_delta;
  r.timestamp = batch_.timestamp_type() == TimestampType::log_append_time ? batch_.max_timestamp()
                                                                          : batch_.base_timestamp() + ts_delta;
  ++read_;
  return true;
}

ValidationResult validate_batch(std::span<const std::byte> bytes, const BatchLimits& limits, BatchInfo* info) {
  if (bytes.size() < L::log_overhead) return fail(ErrorCode::corrupt_message, "truncated batch header");
  RecordBatchView b(bytes);
  if (bytes.size() > L::magic) {
    int8_t magic = b.magic();
    if (magic < 2 && magic >= 0) return fail(ErrorCode::unsupported_for_message_format, "magic < 2");
    if (magic != 2) return fail(ErrorCode::corrupt_message, "unknown magic");
  }
  int32_t blen = b.batch_length();
  if (blen < static_cast<int32_t>(L::header_size - L::log_overhead))
    return fail(ErrorCode::corrupt_message, "batch length below the header size");
  size_t size = b.size();
  if (size > bytes.size()) {
    if (size > limits.max_batch_bytes) return fail(ErrorCode::message_too_large, "batch larger than max.message.bytes");
    return fail(ErrorCode::corrupt_message, "batch extends past the payload");
  }
  if (size > limits.max_batch_bytes) return fail(ErrorCode::message_too_large, "batch larger than max.message.bytes");
  if (limits.check_crc && !b.crc_valid()) return fail(ErrorCode::corrupt_message, "CRC mismatch");
  int codec = b.attributes() & batch_attr::codec_mask;
  if (!valid_compression(codec)) return fail(ErrorCode::unsupported_compression_type, "unknown codec");
  int32_t count = b.records_count();
  if (count < 0 || (count == 0 && !limits.stored)) return fail(ErrorCode::invalid_record, "batch without records");
  if (limits.stored ? b.last_offset_delta() < count - 1 || b.last_offset_delta() < 0 : b.last_offset_delta() != count - 1)
    return fail(ErrorCode::invalid_record, "lastOffsetDelta disagrees with recordsCount");
  if (b.max_timestamp() < -1 || b.base_timestamp() < -1) return fail(ErrorCode::invalid_record, "negative timestamp");
  if (limits.from_client) {
    if (b.is_control()) return fail(ErrorCode::invalid_record, "Clients are not allowed to write control records");
    if (b.producer_id() >= 0 && b.base_sequence() < 0) {
      return fail(ErrorCode::invalid_record, "Invalid sequence number " + std::to_string(b.base_sequence()) +
                                                 " in record batch with producerId " + std::to_string(b.producer_id()));
    }
    if (b.is_transactional() && b.producer_id() < 0)
      return fail(ErrorCode::invalid_record, "a transactional record batch needs a producer id");
  }

  if (limits.check_records) {
    Bytes decompressed;
    auto data = b.records_data();
    if (b.compression() != Compression::none) {
      auto err = decompress_error(decompress(b.compression(), data, limits.max_decompressed_bytes, decompressed));
      if (err != ErrorCode::none) return fail(err, "records do not decompress");
      data = decompressed;
    }
    const std::byte* p = data.data();
    const std::byte* end = p + data.size();
    int32_t prev_delta = -1;
    // Bad keys and timestamps are gathered, one error per record (its key first), so that the
    // client can fail exactly those records (KIP-467); bad framing ends the walk at once.
    std::vector<RecordError> errors;
    bool timestamp_error = false;
    for (int32_t i = 0; i < count; ++i) {
      int32_t delta;
      int64_t ts_delta;
      bool null_key = false;
      if (!parse_record(p, end, nullptr, delta, ts_delta, &null_key))
        return fail(ErrorCode::corrupt_message, "bad record framing");
      bool delta_ok = limits.stored ? delta > prev_delta && delta <= b.last_offset_delta() : delta == i;
      if (!delta_ok) return fail(ErrorCode::invalid_record, "offset deltas not sequential");
      prev_delta = delta;
      if (limits.require_keys && null_key) {
        errors.push_back({i, "Compacted topic cannot accept message without key in topic partition " +
                                 std::string(limits.partition_name) + "."});
        continue;
      }
      // A delta that overflows the base timestamp is no time at all: out of any bounds.
      int64_t ts = 0;
      const bool absurd = __builtin_add_overflow(b.base_timestamp(), ts_delta, &ts);
      const bool bounded = limits.earliest_timestamp != INT64_MIN || limits.latest_timestamp != INT64_MAX;
      if (bounded && (absurd || ts < limits.earliest_timestamp || ts > limits.latest_timestamp)) {
        errors.push_back({i, "Timestamp " + std::to_string(ts) + " of message with offset " + std::to_string(i) +
                                 " is out of range. The timestamp should be within [" +
                                 std::to_string(limits.earliest_timestamp) + ", " +
                                 std::to_string(limits.latest_timestamp) + "]"});
        timestamp_error = true;
      }
    }
    if (p != end) return fail(ErrorCode::corrupt_message, "bytes after the last record");
    if (!errors.empty()) return record_errors(std::move(errors), timestamp_error);
  }
  // After the records, as Kafka checks it after them too (with the producer's state).
  if (limits.refuse_transactional && b.is_transactional())
    return fail(ErrorCode::invalid_txn_state, "Record was not part of an ongoing transaction");

  ValidationResult r;
  r.valid_bytes = size;
  r.batch_count = 1;
  r.record_count = count;
  if (info) {
    info->size = size;
    info->last_offset_delta = b.last_offset_delta();
    info->records_count = count;
    info->max_timestamp = b.max_timestamp();
    info->compression = b.compression();
  }
  return r;
}

bool has_more_than_one_batch(std::span<const std::byte> payload) {
  if (payload.size() < batch_layout::log_overhead) return false;
  const int64_t len = RecordBatchView(payload).batch_length();
  return len >= 0 && static_cast<uint64_t>(len) + batch_layout::log_overhead < payload.size();
}

ValidationResult validate_batches(std::span<const std::byte> payload, const BatchLimits& limits,
                                  std::vector<BatchInfo>* infos) {
  ValidationResult total;
  if (payload.empty()) return fail(ErrorCode::corrupt_message, "empty payload");
  size_t pos = 0;
  while (pos < payload.size()) {
    BatchInfo info;
    auto r = validate_batch(payload.subspan(pos), limits, &info);
    if (!r.ok()) {
      r.valid_bytes = pos;
      r.batch_count = total.batch_count;
      r.record_count = total.record_count;
      return r;
    }
    info.position = pos;
    if (infos) infos->push_back(info);
    pos += info.size;
    total.valid_bytes = pos;
    total.batch_count += 1;
    total.record_count += info.records_count;
  }
  return total;
}

}  // namespace brokerd::storage
