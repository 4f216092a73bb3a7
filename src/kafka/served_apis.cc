#include "kafka/served_apis.h"

#include <algorithm>

namespace brokerd::kafka {
namespace {

// One line per API: adding an API is adding its line here and its handler file.
// Minimum: the oldest version Kafka 4.2 brokers accept (KIP-896; Kafka advertises Produce 0-2
// only to refuse them). Maximum: the newest version Kafka 4.2 brokers serve.
constexpr ServedApi kServed[] = {
    {0, 3, 13, handle_produce},   // Produce
    {1, 4, 18, handle_fetch},   // Fetch
    {2, 1, 11, handle_list_offsets},    // ListOffsets
    {3, 0, 13, handle_metadata},   // Metadata
    {18, 0, 4, handle_api_versions},   // ApiVersions
    {19, 2, 7, handle_create_topics},   // CreateTopics
    {20, 1, 6, handle_delete_topics},   // DeleteTopics
    {21, 0, 2, handle_delete_records},   // DeleteRecords
    {32, 1, 4, handle_describe_configs},   // DescribeConfigs
    {22, 0, 5, handle_init_producer_id},   // InitProducerId
    {33, 0, 2, handle_alter_configs},   // AlterConfigs
    {35, 1, 4, handle_describe_log_dirs},  // DescribeLogDirs
    {34, 1, 2, handle_alter_replica_log_dirs},  // AlterReplicaLogDirs
    {48, 0, 1, handle_describe_client_quotas},  // DescribeClientQuotas
    {49, 0, 1, handle_alter_client_quotas},  // AlterClientQuotas
    {37, 0, 3, handle_create_partitions},   // CreatePartitions
    {43, 0, 2, handle_elect_leaders},   // ElectLeaders
    {45, 0, 1, handle_alter_partition_reassignments},   // AlterPartitionReassignments
    {46, 0, 0, handle_list_partition_reassignments},   // ListPartitionReassignments
    {44, 0, 1, handle_incremental_alter_configs},   // IncrementalAlterConfigs
    {60, 0, 2, handle_describe_cluster},   // DescribeCluster
    {8, 2, 10, handle_offset_commit},   // OffsetCommit
    {9, 1, 10, handle_offset_fetch},   // OffsetFetch
    {10, 0, 6, handle_find_coordinator},   // FindCoordinator
    {11, 0, 9, handle_join_group},   // JoinGroup
    {12, 0, 4, handle_heartbeat},   // Heartbeat
    {13, 0, 5, handle_leave_group},   // LeaveGroup
    {14, 0, 5, handle_sync_group},   // SyncGroup
    {15, 0, 6, handle_describe_groups},   // DescribeGroups
    {16, 0, 5, handle_list_groups},   // ListGroups
    {42, 0, 2, handle_delete_groups},   // DeleteGroups
    {47, 0, 0, handle_offset_delete},   // OffsetDelete
    {61, 0, 0, handle_describe_producers},   // DescribeProducers
    {24, 0, 5, handle_add_partitions_to_txn},   // AddPartitionsToTxn
    {25, 0, 4, handle_add_offsets_to_txn},   // AddOffsetsToTxn
    {26, 0, 5, handle_end_txn},   // EndTxn
    {27, 1, 2, handle_write_txn_markers},   // WriteTxnMarkers
    {28, 0, 5, handle_txn_offset_commit},   // TxnOffsetCommit
    {65, 0, 0, handle_describe_transactions},   // DescribeTransactions
    {66, 0, 2, handle_list_transactions},   // ListTransactions
    {55, 0, 2, handle_describe_quorum},   // DescribeQuorum
    {57, 0, 2, handle_update_features},   // UpdateFeatures
    {23, 2, 4, handle_offset_for_leader_epoch},   // OffsetForLeaderEpoch
    {74, 0, 1, handle_list_config_resources},   // ListConfigResources
    {75, 0, 0, handle_describe_topic_partitions},   // DescribeTopicPartitions
    {17, 0, 1, handle_sasl_handshake},   // SaslHandshake
    {36, 0, 2, handle_sasl_authenticate},   // SaslAuthenticate
    {50, 0, 0, handle_describe_user_scram_credentials},   // DescribeUserScramCredentials
    {51, 0, 0, handle_alter_user_scram_credentials},   // AlterUserScramCredentials
    {29, 1, 3, handle_describe_acls},   // DescribeAcls
    {30, 1, 3, handle_create_acls},   // CreateAcls
    {31, 1, 3, handle_delete_acls},   // DeleteAcls
    // brokerd's own APIs (proto/brokerd), in a key range Kafka does not use.
    {30000, 0, 0, handle_create_mirror_links},   // CreateMirrorLinks
    {30001, 0, 0, handle_alter_mirror_links},   // AlterMirrorLinks
    {30002, 0, 0, handle_describe_mirror_links},   // DescribeMirrorLinks
    {30003, 0, 0, handle_promote_mirror_topics},   // PromoteMirrorTopics
    {30004, 0, 0, handle_alter_tenant_limits},   // AlterTenantLimits
    {30005, 0, 0, handle_describe_tenant_limits},   // DescribeTenantLimits
};

}  // namespace

std::span<const ServedApi> served_apis() { return kServed; }

const ServedApi* find_served_api(int16_t api_key) {
  auto it = std::find_if(std::begin(kServed), std::end(kServed), [&](const ServedApi& a) { return a.api_key == api_key; });
  return it == std::end(kServed) ? nullptr : &*it;
}

}  // namespace brokerd::kafka
