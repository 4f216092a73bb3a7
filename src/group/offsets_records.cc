#include "brokerd/group/offsets_records.h"

#include "brokerd/protocol/messages/group_metadata_key.h"
#include "brokerd/protocol/messages/group_metadata_value.h"
#include "brokerd/protocol/messages/offset_commit_key.h"
#include "brokerd/protocol/messages/offset_commit_value.h"
#include "brokerd/protocol/coordinator_record.h"
#include "brokerd/protocol/wire.h"

namespace brokerd::group {

Bytes encode_offset_key(const std::string& group_id, const OffsetKey& key) {
  protocol::OffsetCommitKey k;
  k.group = group_id;
  k.topic = key.topic;
  k.partition = key.partition;
  return protocol::versioned_record(kOffsetKeyVersion, k);
}

Bytes encode_offset_value(const OffsetEntry& e) {
  protocol::OffsetCommitValue v;
  v.offset = e.offset;
  v.leader_epoch = e.leader_epoch;
  v.metadata = e.metadata;
  v.commit_timestamp = e.commit_timestamp;
  return protocol::versioned_record(kOffsetValueVersion, v);
}

Bytes encode_group_key(const std::string& group_id) {
  protocol::GroupMetadataKey k;
  k.group = group_id;
  return protocol::versioned_record(kGroupKeyVersion, k);
}

Bytes encode_group_value(const StoredGroup& g) {
  protocol::GroupMetadataValue v;
  v.protocol_type = g.protocol_type;
  v.generation = g.generation;
  v.protocol = g.protocol_name;
  v.leader = g.leader;
  v.current_state_timestamp = g.state_timestamp;
  for (const auto& m : g.members) {
    protocol::GroupMetadataValue::MemberMetadata mm;
    mm.member_id = m.member_id;
    mm.group_instance_id = m.instance_id;
    mm.client_id = m.client_id;
    mm.client_host = m.client_host;
    mm.rebalance_timeout = m.rebalance_timeout_ms;
    mm.session_timeout = m.session_timeout_ms;
    mm.subscription = m.subscription;
    mm.assignment = m.assignment;
    v.members.push_back(std::move(mm));
  }
  return protocol::versioned_record(kGroupValueVersion, v);
}

std::optional<RecordKey> decode_key(std::span<const std::byte> bytes) {
  protocol::Reader r(bytes);
  int16_t version = r.i16();
  if (version == 0 || version == 1) {
    protocol::OffsetCommitKey k;
    k.decode(r, version);
    protocol::expect_record_end(r, "OffsetCommitKey");
    return OffsetRecordKey{k.group, {k.topic, k.partition}};
  }
  if (version == 2) {
    protocol::GroupMetadataKey k;
    k.decode(r, version);
    protocol::expect_record_end(r, "GroupMetadataKey");
    return GroupRecordKey{k.group};
  }
  return std::nullopt;
}

OffsetEntry decode_offset_value(std::span<const std::byte> bytes) {
  protocol::Reader r(bytes);
  int16_t version = r.i16();
  if (version < 0 || version > protocol::OffsetCommitValue::max_version)
    throw protocol::DecodeError("unknown OffsetCommitValue version " + std::to_string(version));
  protocol::OffsetCommitValue v;
  v.decode(r, version);
  protocol::expect_record_end(r, "OffsetCommitValue");
  return OffsetEntry{v.offset, v.leader_epoch, v.metadata, v.commit_timestamp, v.expire_timestamp};
}

StoredGroup decode_group_value(std::span<const std::byte> bytes) {
  protocol::Reader r(bytes);
  int16_t version = r.i16();
  if (version < 0 || version > protocol::GroupMetadataValue::max_version)
    throw protocol::DecodeError("unknown GroupMetadataValue version " + std::to_string(version));
  protocol::GroupMetadataValue v;
  v.decode(r, version);
  protocol::expect_record_end(r, "GroupMetadataValue");
  StoredGroup g;
  g.protocol_type = v.protocol_type;
  g.generation = v.generation;
  g.protocol_name = v.protocol;
  g.leader = v.leader;
  g.state_timestamp = v.current_state_timestamp;
  for (auto& mm : v.members) {
    StoredMember m;
    m.member_id = mm.member_id;
    m.instance_id = mm.group_instance_id;
    m.client_id = mm.client_id;
    m.client_host = mm.client_host;
    m.rebalance_timeout_ms = mm.rebalance_timeout;
    m.session_timeout_ms = mm.session_timeout;
    m.subscription = std::move(mm.subscription);
    m.assignment = std::move(mm.assignment);
    g.members.push_back(std::move(m));
  }
  return g;
}

std::optional<bool> control_marker(const storage::RecordBatchView& batch) {
  storage::RecordReader reader(batch);
  storage::Record r;
  if (!reader.next(r) || !r.key || r.key->size() < 4) return std::nullopt;
  // The key: int16 version, int16 type (ABORT 0, COMMIT 1).
  const auto type = static_cast<int16_t>((std::to_integer<uint16_t>((*r.key)[2]) << 8) | std::to_integer<uint16_t>((*r.key)[3]));
  if (type == 0) return false;
  if (type == 1) return true;
  return std::nullopt;
}

bool coordinator_batch(const storage::RecordBatchView& batch) {
  return !batch.is_control() && !batch.is_transactional() && batch.producer_id() < 0;
}

}  // namespace brokerd::group
