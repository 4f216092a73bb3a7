#include "brokerd/storage/batch_builder.h"

#include <algorithm>
#include <stdexcept>

#include "brokerd/storage/crc32c.h"
#include "varint.h"

namespace brokerd::storage {

using namespace detail;
namespace L = batch_layout;

namespace {
std::optional<Bytes> copy_opt(std::optional<std::span<const std::byte>> s) {
  if (!s) return std::nullopt;
  return Bytes(s->begin(), s->end());
}
void write_opt(Bytes& out, const std::optional<Bytes>& b) {
  if (!b) {
    write_varint(out, -1);
    return;
  }
  write_varint(out, static_cast<int32_t>(b->size()));
  out.insert(out.end(), b->begin(), b->end());
}
}  // namespace

void BatchBuilder::add(int64_t timestamp, std::optional<std::span<const std::byte>> key,
                       std::optional<std::span<const std::byte>> value, std::span<const RecordHeader> headers,
                       std::optional<int32_t> offset_delta) {
  Pending p;
  p.timestamp = timestamp;
  p.offset_delta = offset_delta ? *offset_delta : (records_.empty() ? 0 : records_.back().offset_delta + 1);
  p.key = copy_opt(key);
  p.value = copy_opt(value);
  for (const auto& h : headers) p.headers.emplace_back(Bytes(h.key.begin(), h.key.end()), copy_opt(h.value));
  body_size_ += 24 + (key ? key->size() : 0) + (value ? value->size() : 0);
  records_.push_back(std::move(p));
}

void BatchBuilder::add(int64_t timestamp, std::string_view key, std::string_view value) {
  add(timestamp, as_bytes(key), as_bytes(value));
}

Bytes BatchBuilder::build() const {
  int64_t base_ts = records_.empty() ? -1 : records_.front().timestamp;
  int64_t max_ts = -1;
  for (const auto& r : records_) max_ts = std::max(max_ts, r.timestamp);

  Bytes body;
  body.reserve(body_size_);
  Bytes rec;
  for (const auto& r : records_) {
    rec.clear();
    rec.push_back(std::byte{0});  // record attributes, unused
    write_varlong(rec, r.timestamp - base_ts);
    write_varint(rec, r.offset_delta);
    write_opt(rec, r.key);
    write_opt(rec, r.value);
    write_varint(rec, static_cast<int32_t>(r.headers.size()));
    for (const auto& [k, v] : r.headers) {
      write_opt(rec, k);
      write_opt(rec, v);
    }
    write_varint(body, static_cast<int32_t>(rec.size()));
    body.insert(body.end(), rec.begin(), rec.end());
  }

  Bytes out(L::header_size);
  if (opts_.compression == Compression::none) {
    out.insert(out.end(), body.begin(), body.end());
  } else if (!compress(opts_.compression, body, out)) {
    throw std::runtime_error("compression failed");
  }

  uint16_t attrs = static_cast<uint16_t>(opts_.compression);
  if (opts_.timestamp_type == TimestampType::log_append_time) attrs |= batch_attr::timestamp_type;
  if (opts_.transactional) attrs |= batch_attr::transactional;
  if (opts_.control) attrs |= batch_attr::control;
  int32_t last_delta = records_.empty() ? 0 : records_.back().offset_delta;

  std::byte* h = out.data();
  store_be64(h + L::base_offset, static_cast<uint64_t>(opts_.base_offset));
  store_be32(h + L::batch_length, static_cast<uint32_t>(out.size() - L::log_overhead));
  store_be32(h + L::partition_leader_epoch, static_cast<uint32_t>(opts_.partition_leader_epoch));
  h[L::magic] = std::byte{2};
  store_be16(h + L::attributes, attrs);
  store_be32(h + L::last_offset_delta, static_cast<uint32_t>(last_delta));
  store_be64(h + L::base_timestamp, static_cast<uint64_t>(base_ts));
  store_be64(h + L::max_timestamp, static_cast<uint64_t>(max_ts));
  store_be64(h + L::producer_id, static_cast<uint64_t>(opts_.producer_id));
  store_be16(h + L::producer_epoch, static_cast<uint16_t>(opts_.producer_epoch));
  store_be32(h + L::base_sequence, static_cast<uint32_t>(opts_.base_sequence));
  store_be32(h + L::records_count, static_cast<uint32_t>(records_.size()));
  store_be32(h + L::crc, crc32c(h + L::attributes, out.size() - L::attributes));
  return out;
}

}  // namespace brokerd::storage
