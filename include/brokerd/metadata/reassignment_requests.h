#pragma once
// AlterPartitionReassignments (API 45) and ListPartitionReassignments (API 46) as the active
// controller answers them (other brokers forward both to it).
#include <cstdint>

#include "brokerd/protocol/messages/alter_partition_reassignments_request.h"
#include "brokerd/protocol/messages/alter_partition_reassignments_response.h"
#include "brokerd/protocol/messages/list_partition_reassignments_request.h"
#include "brokerd/protocol/messages/list_partition_reassignments_response.h"

namespace brokerd::metadata {

class MetadataStore;

// The versions served (Kafka 4.x: 45 v0-1, 46 v0).
inline constexpr int16_t kAlterPartitionReassignments = 45, kAlterPartitionReassignmentsMaxVersion = 1;
inline constexpr int16_t kListPartitionReassignments = 46;

// Blocks until the changes commit: call it off the reactors.
protocol::AlterPartitionReassignmentsResponse answer_alter_partition_reassignments(
    MetadataStore& store, const protocol::AlterPartitionReassignmentsRequest& req, int16_t version);

// From the store's image (the controller's is the one that knows the latest).
protocol::ListPartitionReassignmentsResponse answer_list_partition_reassignments(
    const MetadataStore& store, const protocol::ListPartitionReassignmentsRequest& req);

}  // namespace brokerd::metadata
