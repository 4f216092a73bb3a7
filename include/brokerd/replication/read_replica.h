#pragma once
// Fetch from the nearest replica (KIP-392): which replica a consumer in `client_rack` should
// read a partition from. The leader when it shares the consumer's rack or no candidate does;
// otherwise, of the in-sync followers in that rack holding the consumer's position, the one
// furthest ahead (the lowest id among equals, so a consumer is not moved back and forth).
#include <cstdint>
#include <span>
#include <string_view>

#include "brokerd/replication/types.h"

namespace brokerd::replication {

// Kafka's class names for replica.selector.class: the rack-aware choice, and the leader only
// (also the meaning of an empty value).
inline constexpr std::string_view kRackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector";
inline constexpr std::string_view kLeaderSelector = "org.apache.kafka.common.replica.LeaderSelector";

struct ReadCandidate {
  BrokerId id = kNoBroker;
  Offset log_end = kNoOffset;
  std::string_view rack;
};

BrokerId choose_read_replica(std::string_view client_rack, BrokerId leader, std::string_view leader_rack,
                             std::span<const ReadCandidate> followers);

}  // namespace brokerd::replication
