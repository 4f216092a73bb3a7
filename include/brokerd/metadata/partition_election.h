#pragma once
// The controller's leader elections when a broker's availability changes, by replication's
// rules (src/replication/partition_state.h). Pure: the image before the change in, the
// partition changes to commit with it out.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/replication/partition_state.h"

namespace brokerd::metadata {

// A change of one partition (a PartitionChangeRecord): each set field replaces the current
// one. A new leader (>= -1) bumps the leader epoch; every change bumps the partition epoch.
struct PartitionChange {
  std::optional<std::vector<int32_t>> isr;
  std::optional<std::vector<int32_t>> elr;
  std::optional<int32_t> leader;
  std::optional<std::vector<int32_t>> replicas;
  std::optional<std::vector<int32_t>> adding;    // a reassignment's (empty: none)
  std::optional<std::vector<int32_t>> removing;
};

struct PartitionUpdate {
  protocol::Uuid topic_id;
  int32_t partition = 0;
  PartitionChange change;
};

// A partition as replication's rules see it.
replication::PartitionState replication_state(const PartitionAssignment& a);

// `broker` is being fenced: it leaves every ISR where other members remain (to the ELR when
// the ISR falls below min.insync.replicas); each partition it led gets the first live ISR
// member, else a live ELR member, else (unclean.leader.election.enable) any live replica,
// else no leader (-1). `default_min_isr` applies to topics without their own setting.
std::vector<PartitionUpdate> elect_on_fence(const MetadataImage& image, int32_t broker, int32_t default_min_isr,
                                            uint32_t bugs = 0);

// `broker` is being unfenced: leaderless partitions it may lead get a leader.
std::vector<PartitionUpdate> elect_on_unfence(const MetadataImage& image, int32_t broker, int32_t default_min_isr,
                                              uint32_t bugs = 0);

// `broker` registered after an unclean stop (it may have lost unflushed data): it leaves
// every ISR and ELR where another replica is eligible, and partitions it led are re-elected.
std::vector<PartitionUpdate> elect_on_unclean_restart(const MetadataImage& image, int32_t broker,
                                                      int32_t default_min_isr, uint32_t bugs = 0);

// ElectLeaders (API 43): Kafka's election types.
enum class ElectionType : int8_t { preferred = 0, unclean = 1 };

struct ElectionTarget {
  std::string topic;
  int32_t partition = 0;
};

// One partition's answer: none (elected), ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION, with a message.
struct ElectionResult {
  std::string topic;
  int32_t partition = 0;
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;
};

struct Elections {
  std::vector<PartitionUpdate> updates;  // to commit
  std::vector<ElectionResult> results;   // to answer
};

// The elections an operator asks for, on the named partitions or, with no targets, on every
// partition (whose answers then leave out those that needed none, as Kafka's do).
Elections elect_leaders(const MetadataImage& image, const std::optional<std::vector<ElectionTarget>>& targets,
                        ElectionType type);

// Kafka's automatic leader balance: for every live broker whose share of the partitions it is
// preferred for but does not lead passes `imbalance_percent`, the preferred elections of those
// partitions that can take place.
std::vector<PartitionUpdate> rebalance_leaders(const MetadataImage& image, int32_t imbalance_percent);

}  // namespace brokerd::metadata
