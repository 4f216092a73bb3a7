#pragma once
// The vocabulary of partition replication: ids, offsets, epochs, the core's configuration and
// the defects the simulator can switch on.
#include <cstdint>

namespace brokerd::replication {

using BrokerId = int32_t;
using Offset = int64_t;
using Epoch = int32_t;

inline constexpr BrokerId kNoBroker = -1;
inline constexpr Epoch kNoEpoch = -1;
inline constexpr Offset kNoOffset = -1;
// A broker epoch (the registration a broker process holds) not known.
inline constexpr int64_t kNoBrokerEpoch = -1;

// Deliberate defects that prove the simulator's checker catches them. Never set outside tests.
enum class Bug : uint32_t {
  none = 0,
  hw_before_isr = 1u << 0,           // the high watermark ignores the slowest in-sync follower
  elect_outside_isr = 1u << 1,       // the controller elects any live replica
  skip_truncation = 1u << 2,         // a new follower keeps its log past the leader epoch's end
  isr_before_caught_up = 1u << 3,    // a follower rejoins the ISR on its first fetch
  forget_epoch_cache = 1u << 4,      // the leader-epoch cache is empty after a restart
  ack_after_leader_write = 1u << 5,  // the high watermark follows the leader's own log end
  not_written_after_fetch = 1u << 6,  // "not written" for a batch a follower was already sent
  stale_alter_answer = 1u << 7,       // any answer ends the pending ISR proposal
};

struct ReplicaConfig {
  BrokerId broker_id = kNoBroker;
  int32_t min_insync_replicas = 1;
  // A follower in the ISR that has not caught up to the leader's end for this long is dropped.
  int64_t replica_lag_time_max_ms = 30'000;
  // Resend an AlterPartition that got no answer after this long.
  int64_t alter_partition_retry_ms = 1'000;
  uint32_t bugs = 0;

  bool has_bug(Bug b) const { return (bugs & static_cast<uint32_t>(b)) != 0; }
};

}  // namespace brokerd::replication
