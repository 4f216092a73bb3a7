#pragma once
// Value types of the Raft core: offsets, epochs, replica ids, log entries.
#include <cstdint>
#include <string>

namespace brokerd::raft {

// Plain integers on purpose: these values cross the message structs, the log and the
// simulator's checks constantly, and Kafka's wire fields are int64/int32 of the same meaning.
using Offset = int64_t;
using Epoch = int32_t;
using ReplicaId = int32_t;

inline constexpr ReplicaId kNoReplica = -1;
inline constexpr Epoch kNoEpoch = -1;

struct OffsetAndEpoch {
  Offset offset = 0;
  Epoch epoch = 0;
  friend bool operator==(const OffsetAndEpoch&, const OffsetAndEpoch&) = default;
};

// One replicated record. `control` marks entries the core writes itself (the leader-change
// entry that opens every epoch); the state machine skips them.
struct Entry {
  Offset offset = 0;
  Epoch epoch = 0;
  bool control = false;
  std::string payload;
  friend bool operator==(const Entry&, const Entry&) = default;
};

enum class Role { unattached, prospective, candidate, leader, resigned, follower };

const char* role_name(Role r);

}  // namespace brokerd::raft
