#pragma once
// Value types of the group coordinator: group states, its settings, and the inputs and
// outputs of each group operation (kept free of the wire codecs, so the state machine can be
// driven by tests without a socket).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/error_code.h"

namespace brokerd::group {

using protocol::ErrorCode;

inline constexpr std::string_view kOffsetsTopic = "__consumer_offsets";

// The classic protocol's group states, as Kafka names them.
enum class GroupState { empty, preparing_rebalance, completing_rebalance, stable, dead };
std::string_view state_name(GroupState s);

struct Settings {
  int32_t offsets_partitions = 50;            // offsets.topic.num.partitions
  int64_t initial_rebalance_delay_ms = 3000;  // group.initial.rebalance.delay.ms
  int32_t min_session_timeout_ms = 6000;      // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;   // group.max.session.timeout.ms
  int32_t max_size = INT32_MAX;               // group.max.size
  int64_t offsets_retention_ms = 10080LL * 60 * 1000;  // offsets.retention.minutes
  int64_t retention_check_interval_ms = 600000;        // offsets.retention.check.interval.ms
  int32_t offset_metadata_max_bytes = 4096;            // offset.metadata.max.bytes
  int64_t commit_timeout_ms = 5000;                    // offsets.commit.timeout.ms
  int32_t offsets_segment_bytes = 104857600;           // offsets.topic.segment.bytes
};

struct Protocol {
  std::string name;
  Bytes metadata;
};

struct JoinRequest {
  std::string group_id;
  std::string member_id;  // empty for a new member
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  int32_t session_timeout_ms = 0;
  int32_t rebalance_timeout_ms = -1;
  std::string protocol_type;
  std::vector<Protocol> protocols;
  bool require_known_member_id = false;  // JoinGroup v4+
  bool supports_skip_assignment = false;  // JoinGroup v9+
};

struct JoinedMember {
  std::string member_id;
  std::optional<std::string> instance_id;
  Bytes metadata;
};

struct JoinResult {
  ErrorCode error = ErrorCode::none;
  int32_t generation = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader;
  std::string member_id;
  bool skip_assignment = false;
  std::vector<JoinedMember> members;  // only for the leader
};

struct SyncRequest {
  std::string group_id;
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> instance_id;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::vector<std::pair<std::string, Bytes>> assignments;  // member id -> assignment (leader only)
};

struct SyncResult {
  ErrorCode error = ErrorCode::none;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  Bytes assignment;
};

struct LeaveMember {
  std::string member_id;
  std::optional<std::string> instance_id;
};

struct LeaveResult {
  ErrorCode error = ErrorCode::none;               // the group's
  std::vector<ErrorCode> members;                  // one per LeaveMember
};

struct OffsetKey {
  std::string topic;
  int32_t partition = 0;
  auto operator<=>(const OffsetKey&) const = default;
};

struct OffsetEntry {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp = -1;
  int64_t expire_timestamp = -1;  // only from v1 values; -1 otherwise
};

struct CommitRequest {
  std::string group_id;
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> instance_id;
  std::vector<std::pair<OffsetKey, OffsetEntry>> offsets;
};

// TxnOffsetCommit: offsets sent to a transaction, visible once it commits.
struct TxnCommitRequest : CommitRequest {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
};

struct FetchedOffset {
  OffsetKey key;
  OffsetEntry entry;  // offset -1 when nothing is committed
  // UNSTABLE_OFFSET_COMMIT: a transaction holds an offset of this partition not yet
  // committed or aborted (only when the fetch asks for stable offsets).
  ErrorCode error = ErrorCode::none;
};

struct FetchOffsetsResult {
  ErrorCode error = ErrorCode::none;
  std::vector<FetchedOffset> offsets;
};

struct GroupListing {
  std::string group_id;
  std::string protocol_type;
  GroupState state = GroupState::empty;
};

struct DescribedMember {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::string client_id;
  std::string client_host;
  Bytes metadata;
  Bytes assignment;
};

struct GroupDescription {
  ErrorCode error = ErrorCode::none;
  std::string group_id;
  GroupState state = GroupState::dead;
  std::string protocol_type;
  std::string protocol_name;
  std::vector<DescribedMember> members;
};

}  // namespace brokerd::group
