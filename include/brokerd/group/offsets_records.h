#pragma once
// The records of __consumer_offsets, in Kafka's layout: a key is an int16 version followed by
// OffsetCommitKey (versions 0-1) or GroupMetadataKey (version 2), non-flexible; a value is an
// int16 version followed by OffsetCommitValue or GroupMetadataValue; a null value deletes.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/group/types.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::group {

// What the coordinator writes (Kafka 3.x's choices).
inline constexpr int16_t kOffsetKeyVersion = 1;
inline constexpr int16_t kGroupKeyVersion = 2;
inline constexpr int16_t kOffsetValueVersion = 3;
inline constexpr int16_t kGroupValueVersion = 3;

struct StoredMember {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = -1;
  int32_t session_timeout_ms = 0;
  Bytes subscription;  // the member's metadata for the selected protocol
  Bytes assignment;
};

struct StoredGroup {
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol_name;
  std::optional<std::string> leader;
  int64_t state_timestamp = -1;
  std::vector<StoredMember> members;
};

struct OffsetRecordKey {
  std::string group_id;
  OffsetKey key;
};
struct GroupRecordKey {
  std::string group_id;
};
using RecordKey = std::variant<OffsetRecordKey, GroupRecordKey>;

Bytes encode_offset_key(const std::string& group_id, const OffsetKey& key);
Bytes encode_offset_value(const OffsetEntry& entry);
Bytes encode_group_key(const std::string& group_id);
Bytes encode_group_value(const StoredGroup& group);

// Throws protocol::DecodeError on malformed bytes (trailing bytes included); nullopt for a key
// version this broker does not know (records of other coordinators, which replay skips).
std::optional<RecordKey> decode_key(std::span<const std::byte> key);
OffsetEntry decode_offset_value(std::span<const std::byte> value);
StoredGroup decode_group_value(std::span<const std::byte> value);

// Whether a batch of __consumer_offsets can hold the coordinator's records. Its batches are
// neither control nor transactional and carry no producer id (there are no transactional
// offset commits yet): anything else came from elsewhere, and loading skips it.
bool coordinator_batch(const storage::RecordBatchView& batch);
// A control batch's marker: true for COMMIT, false for ABORT, nullopt for another control
// record (or one that does not decode).
std::optional<bool> control_marker(const storage::RecordBatchView& batch);

}  // namespace brokerd::group
