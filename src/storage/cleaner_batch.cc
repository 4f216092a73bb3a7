#include "cleaner_batch.h"

#include <cstring>
#include <vector>

#include "brokerd/storage/crc32c.h"
#include "varint.h"

namespace brokerd::storage::detail {
namespace L = batch_layout;

namespace {

struct RawRecord {
  const std::byte* attrs;  // first byte of the record body (after its length)
  const std::byte* after_ts;  // offset delta onwards
  const std::byte* end;
  int64_t ts_delta;
};

// Finishes a rebuilt batch in `out` from `at`: header fields, length, CRC.
void finish_header(Bytes& out, size_t at, uint16_t attrs, int64_t base_ts, int32_t count) {
  std::byte* h = out.data() + at;
  store_be32(h + L::batch_length, static_cast<uint32_t>(out.size() - at - L::log_overhead));
  store_be16(h + L::attributes, attrs);
  store_be64(h + L::base_timestamp, static_cast<uint64_t>(base_ts));
  store_be32(h + L::records_count, static_cast<uint32_t>(count));
  store_be32(h + L::crc, crc32c(h + L::attributes, out.size() - at - L::attributes));
}

}  // namespace

FilterOutcome filter_batch(const RecordBatchView& batch, const BatchFilter& f, Bytes& out, Bytes& scratch,
                           Bytes& body, BatchFilterStats& stats, ErrorCode& error) {
  const int32_t count = batch.records_count();
  stats.records_read += count;
  stats.kept_horizon_ms = -1;
  // Control batches (transaction markers) are kept as they are; so is what the map does not cover.
  if ((batch.is_control() && !f.marker_removable) || batch.base_offset() >= f.end_offset) {
    stats.records_kept += count;
    return FilterOutcome::keep_whole;
  }
  const uint16_t attrs = static_cast<uint16_t>(batch.attributes());
  const bool has_horizon = attrs & batch_attr::delete_horizon;
  const int64_t horizon = has_horizon ? batch.base_timestamp() : -1;
  const bool horizon_passed = has_horizon && f.now_ms >= horizon;

  std::span<const std::byte> data = batch.records_data();
  if (batch.compression() != Compression::none) {
    scratch.clear();
    if (decompress(batch.compression(), data, SIZE_MAX / 2, scratch) != DecompressStatus::ok) {
      error = ErrorCode::corrupt_message;
      return FilterOutcome::keep_whole;
    }
    data = scratch;
  }
  thread_local std::vector<RawRecord> kept;
  kept.clear();
  bool tombstones_kept = false;
  const std::byte* p = data.data();
  const std::byte* end = p + data.size();
  for (int32_t i = 0; i < count; ++i) {
    int32_t len, offset_delta, key_len, value_len;
    int64_t ts_delta;
    if (!read_varint(p, end, len) || len < 1 || len > end - p) {
      error = ErrorCode::corrupt_message;
      return FilterOutcome::keep_whole;
    }
    RawRecord r{p, nullptr, p + len, 0};
    const std::byte* q = p + 1;
    if (!read_varlong(q, r.end, ts_delta)) break;
    r.ts_delta = ts_delta;
    r.after_ts = q;
    if (!read_varint(q, r.end, offset_delta) || !read_varint(q, r.end, key_len) || key_len > r.end - q) break;
    const std::byte* key = q;
    if (key_len > 0) q += key_len;
    if (!read_varint(q, r.end, value_len)) break;
    p = r.end;

    const int64_t offset = batch.base_offset() + offset_delta;
    bool keep;
    if (offset >= f.end_offset) {
      keep = true;
    } else if (f.aborted) {
      keep = false;
    } else if (batch.is_control()) {
      keep = !horizon_passed;
      if (keep) tombstones_kept = true;
    } else if (key_len < 0) {
      keep = false;  // a compacted log has no use for records without a key
    } else {
      int64_t latest = f.map->get(std::span<const std::byte>(key, static_cast<size_t>(key_len)));
      if (latest >= 0 && offset < latest) {
        keep = false;
      } else if (value_len < 0) {
        keep = !horizon_passed;
        if (keep) tombstones_kept = true;
        else ++stats.tombstones_removed;
      } else {
        keep = true;
      }
    }
    if (keep) kept.push_back(r);
  }
  if (p != end || static_cast<int32_t>(kept.size()) > count) {
    error = ErrorCode::corrupt_message;
    return FilterOutcome::keep_whole;
  }
  stats.records_kept += static_cast<int64_t>(kept.size());
  const bool set_horizon = tombstones_kept && !has_horizon;
  if (static_cast<int32_t>(kept.size()) == count && !set_horizon) {
    if (tombstones_kept) stats.kept_horizon_ms = horizon;
    return FilterOutcome::keep_whole;
  }

  const size_t at = out.size();
  const std::byte* src = batch.bytes().data();
  out.insert(out.end(), src, src + L::header_size);
  if (kept.empty()) {
    if (!f.keep_if_empty) {
      out.resize(at);
      return FilterOutcome::dropped;
    }
    // Only the header survives: it carries the producer's last sequence.
    int64_t ts = batch.max_timestamp();
    store_be64(out.data() + at + L::max_timestamp, static_cast<uint64_t>(ts));
    finish_header(out, at, static_cast<uint16_t>(attrs & ~batch_attr::codec_mask), ts, 0);
    return FilterOutcome::rewritten;
  }

  // Record bodies: copied as they are, unless the base timestamp moves to a new horizon and
  // their timestamp deltas must follow.
  const int64_t new_horizon = set_horizon ? f.now_ms + f.delete_retention_ms : horizon;
  const int64_t base_ts = set_horizon ? new_horizon : batch.base_timestamp();
  body.clear();
  for (const RawRecord& r : kept) {
    if (!set_horizon) {
      write_varint(body, static_cast<int32_t>(r.end - r.attrs));
      body.insert(body.end(), r.attrs, r.end);
      continue;
    }
    int64_t ts = batch.base_timestamp() + r.ts_delta;
    int64_t delta = ts - base_ts;
    size_t rest = static_cast<size_t>(r.end - r.after_ts);
    write_varint(body, static_cast<int32_t>(1 + varlong_size(delta) + rest));
    body.push_back(*r.attrs);
    write_varlong(body, delta);
    body.insert(body.end(), r.after_ts, r.end);
  }
  if (batch.compression() == Compression::none) {
    out.insert(out.end(), body.begin(), body.end());
  } else if (!compress(batch.compression(), body, out)) {
    error = ErrorCode::unknown_server_error;
    out.resize(at);
    return FilterOutcome::keep_whole;
  }
  uint16_t new_attrs = attrs;
  if (set_horizon) new_attrs |= batch_attr::delete_horizon;
  finish_header(out, at, new_attrs, base_ts, static_cast<int32_t>(kept.size()));
  if (tombstones_kept) stats.kept_horizon_ms = new_horizon;
  return FilterOutcome::rewritten;
}

}  // namespace brokerd::storage::detail
