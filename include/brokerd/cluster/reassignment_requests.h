#pragma once
// AlterPartitionReassignments (API 45) and ListPartitionReassignments (API 46) as a node
// answers them. The active controller commits reassignments itself (other brokers forward
// the request to it); any node lists the reassignments its image holds.
#include <cstdint>

#include "brokerd/cluster/metadata_image.h"
#include "brokerd/protocol/messages/alter_partition_reassignments_request.h"
#include "brokerd/protocol/messages/alter_partition_reassignments_response.h"
#include "brokerd/protocol/messages/list_partition_reassignments_request.h"
#include "brokerd/protocol/messages/list_partition_reassignments_response.h"

namespace brokerd::cluster {

class MetadataStore;

// The versions served (Kafka 4.x: 45 v0-1, 46 v0).
inline constexpr int16_t kAlterPartitionReassignments = 45, kAlterPartitionReassignmentsMaxVersion = 1;
inline constexpr int16_t kListPartitionReassignments = 46;

// Blocks until the changes commit: call it off the reactors.
protocol::AlterPartitionReassignmentsResponse answer_alter_partition_reassignments(
    MetadataStore& store, const protocol::AlterPartitionReassignmentsRequest& req, int16_t version);

protocol::ListPartitionReassignmentsResponse answer_list_partition_reassignments(
    const MetadataImage& image, const protocol::ListPartitionReassignmentsRequest& req);

}  // namespace brokerd::cluster
