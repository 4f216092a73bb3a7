// Encoding and decoding of transaction markers (control batches).
#include "brokerd/storage/control_batch.h"

#include <array>

#include "brokerd/storage/batch_builder.h"

namespace brokerd::storage {

namespace {

template <size_t N>
void put_be(std::array<std::byte, N>& out, size_t at, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i) out[at + i] = static_cast<std::byte>((v >> (8 * (width - 1 - i))) & 0xff);
}

int64_t get_be(std::span<const std::byte> in, size_t at, size_t width) {
  uint64_t u = 0;
  for (size_t i = 0; i < width; ++i) u = (u << 8) | std::to_integer<uint8_t>(in[at + i]);
  return static_cast<int64_t>(u);
}

}  // namespace

Bytes build_marker_batch(const TxnMarker& m, int64_t timestamp_ms) {
  BatchOptions o;
  o.producer_id = m.producer_id;
  o.producer_epoch = m.producer_epoch;
  o.base_sequence = -1;
  o.transactional = true;
  o.control = true;
  std::array<std::byte, 4> key{};
  put_be(key, 0, 0, 2);  // version
  put_be(key, 2, static_cast<uint16_t>(m.type), 2);
  std::array<std::byte, 6> value{};
  put_be(value, 0, 0, 2);  // version
  put_be(value, 2, static_cast<uint32_t>(m.coordinator_epoch), 4);
  BatchBuilder b(o);
  b.add(timestamp_ms, std::span<const std::byte>(key), std::span<const std::byte>(value));
  return b.build();
}

std::optional<TxnMarker> parse_marker_batch(const RecordBatchView& batch) {
  if (!batch.is_control()) return std::nullopt;
  RecordReader reader(batch);
  Record r;
  if (!reader.next(r) || !r.key || r.key->size() < 4) return std::nullopt;
  const int64_t type = get_be(*r.key, 2, 2);
  if (type != 0 && type != 1) return std::nullopt;
  TxnMarker m;
  m.producer_id = batch.producer_id();
  m.producer_epoch = batch.producer_epoch();
  m.type = static_cast<ControlType>(type);
  if (r.value && r.value->size() >= 6) m.coordinator_epoch = static_cast<int32_t>(get_be(*r.value, 2, 4));
  return m;
}

}  // namespace brokerd::storage
