#pragma once
// The metadata writes the active controller makes for brokers that forward them (and for
// tools that talk to the controller listener): CreateTopics, DeleteTopics, CreatePartitions,
// AlterConfigs of topics and AllocateProducerIds. Each decodes its request, applies it
// through the MetadataStore (which validates it against the controller's image and commits
// it to the quorum) and builds the answer. They block on the quorum: call them off the
// reactors.
#include "brokerd/protocol/messages/allocate_producer_ids_request.h"
#include "brokerd/protocol/messages/allocate_producer_ids_response.h"
#include "brokerd/protocol/messages/alter_partition_request.h"
#include "brokerd/protocol/messages/alter_partition_response.h"
#include "brokerd/protocol/messages/alter_configs_request.h"
#include "brokerd/protocol/messages/alter_configs_response.h"
#include "brokerd/protocol/messages/create_partitions_request.h"
#include "brokerd/protocol/messages/create_partitions_response.h"
#include "brokerd/protocol/messages/create_topics_request.h"
#include "brokerd/protocol/messages/create_topics_response.h"
#include "brokerd/protocol/messages/delete_topics_request.h"
#include "brokerd/protocol/messages/delete_topics_response.h"

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata

namespace brokerd::controller {

// The versions served on the controller listener (and the ones brokers send).
inline constexpr int16_t kCreateTopicsVersion = 7, kDeleteTopicsVersion = 6, kCreatePartitionsVersion = 3,
                         kAlterConfigsVersion = 2, kAllocateProducerIdsVersion = 0, kAlterPartitionVersion = 2,
                         kAlterPartitionMaxVersion = 3;
// Brokers send v3: the new ISR with each member's broker epoch (KIP-903).
inline constexpr int16_t kAlterPartitionSendVersion = 3;

// `owner`: the principal the topics are created for (from an envelope), empty for none.
protocol::CreateTopicsResponse serve_create_topics(metadata::MetadataStore& store, const protocol::CreateTopicsRequest& req,
                                                  const std::string& owner = {});
protocol::DeleteTopicsResponse serve_delete_topics(metadata::MetadataStore& store, const protocol::DeleteTopicsRequest& req);
protocol::CreatePartitionsResponse serve_create_partitions(metadata::MetadataStore& store,
                                                           const protocol::CreatePartitionsRequest& req);
protocol::AlterConfigsResponse serve_alter_configs(metadata::MetadataStore& store, const protocol::AlterConfigsRequest& req);
protocol::AllocateProducerIdsResponse serve_allocate_producer_ids(metadata::MetadataStore& store,
                                                                  const protocol::AllocateProducerIdsRequest& req);
// AlterPartition v2-3 (topics by id): each partition's ISR change, checked and committed.
protocol::AlterPartitionResponse serve_alter_partition(metadata::MetadataStore& store,
                                                       const protocol::AlterPartitionRequest& req, int16_t version);

}  // namespace brokerd::controller
