#pragma once
// Partition reassignment (KIP-455) as the controller decides it. Pure: the partition and the
// image before the change in, the partition as it should become out.
//
// A reassignment to target replicas T first widens the replicas to T followed by the current
// replicas that leave (`removing`), marking the new ones `adding`; the new brokers host the
// partition and follow its leader like any replica. Once every member of T is in the ISR
// (an AlterPartition from the leader says so), it completes: the replicas become T, the ISR
// keeps only T, and a leader outside T hands over to the first in-sync member of T. A
// cancellation returns to the replicas before the reassignment.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/metadata/partition_election.h"
#include "brokerd/protocol/error_code.h"

namespace brokerd::metadata {

struct Reassignment {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;
  PartitionAssignment next;  // the partition once the request is applied (when error is none)
};

// Starts, replaces (a new target for one in progress) or, with `target` unset, cancels the
// reassignment of `a`. INVALID_REPLICA_ASSIGNMENT for an empty target, a duplicate or an
// unregistered broker; INVALID_REPLICATION_FACTOR for a change of size that is not allowed;
// NO_REASSIGNMENT_IN_PROGRESS for a cancellation with none. A target whose replicas are all
// in sync already completes at once.
Reassignment reassign(const PartitionAssignment& a, const std::optional<std::vector<int32_t>>& target,
                      const MetadataImage& image, bool allow_replication_factor_change = true);

// The partition once its reassignment completes, if every target replica of `a` is in its
// ISR now; nullopt when none is in progress or it must wait.
std::optional<PartitionAssignment> complete_reassignment(const PartitionAssignment& a, const MetadataImage& image);

// The target of a reassignment in progress (the replicas less those leaving), and the
// replicas before it (less those joining).
std::vector<int32_t> target_replicas(const PartitionAssignment& a);
std::vector<int32_t> original_replicas(const PartitionAssignment& a);

// What a PartitionChangeRecord must say to turn `before` into `after` (a leader that differs
// is a new leader: the epoch is bumped when applied).
PartitionChange change_between(const PartitionAssignment& before, const PartitionAssignment& after);

}  // namespace brokerd::metadata
