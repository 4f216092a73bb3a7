#pragma once
// What the api_matrix files share: the fixture (topics, ids and a producer made by setup()),
// its helpers, the check of one matrix cell, and the cells of every API, by file.
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_table.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_request.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/batch_builder.h"
#include "wire_client.h"

namespace bp = brokerd::protocol;
using brokerd::Bytes;

namespace api_matrix {

using namespace wire_client;

// The check of one matrix cell: the request, then a second request on the same connection.
template <class Resp, class Req>
Resp check_cell(const Req& req, int16_t v) {
  Conn c(g_host, g_port);
  Resp resp = exchange<Resp>(c, req, v);
  try {
    bp::ApiVersionsRequest again;
    auto av = exchange<bp::ApiVersionsResponse>(c, again, 0);
    if (av.error_code != 0) throw Failure("error " + std::to_string(av.error_code));
  } catch (const std::exception& e) {
    throw Failure(std::string("second request on the same connection failed: ") + e.what());
  }
  return resp;
}

// ---------------------------------------------------------------------------------------
// Fixture state, set by setup() (api_matrix_fixture.cc)
// ---------------------------------------------------------------------------------------

inline const std::string kTopic = "matrix";
inline const std::string kCompactedTopic = "matrix-compacted";
inline constexpr int32_t kPartitions = 3;
inline bp::Uuid g_topic_id;
inline bp::Uuid g_compacted_topic_id;
inline const bp::Uuid kUnknownTopicId = [] {
  bp::Uuid u;
  for (size_t i = 0; i < u.bytes.size(); ++i) u.bytes[i] = static_cast<uint8_t>(0xA0 + i);
  return u;
}();
inline int32_t g_node_id = 0;
inline int64_t g_producer_id = -1;
inline int16_t g_producer_epoch = -1;

bp::Records batch_records(int n, int64_t producer_id = -1, int16_t epoch = -1, int32_t seq = -1);
void create_topic(const std::string& name, int32_t partitions, const std::string& cleanup_policy = "");
// Joins `group` as the only member (JoinGroup v5, retrying with the assigned member id) and
// completes the generation with SyncGroup; returns {member_id, generation}.
std::pair<std::string, int32_t> join_group(const std::string& group);
void commit_offset(const std::string& group, int64_t offset);
// The topics, their ids, the node id, a producer id and records in every partition.
void setup();
// A name of its own for the cell of version v ("matrix-oc-v3").
std::string vname(const char* prefix, int16_t v);

// ---------------------------------------------------------------------------------------
// One request builder and checker per API
// ---------------------------------------------------------------------------------------

// api_matrix_produce_fetch.cc
void cell_produce(int16_t v);
void cell_fetch(int16_t v);
void cell_list_offsets(int16_t v);
void cell_metadata(int16_t v);
void cell_delete_records(int16_t v);
void cell_init_producer_id(int16_t v);
void cell_describe_producers(int16_t v);

// api_matrix_transactions.cc
void cell_add_partitions_to_txn(int16_t v);
void cell_add_offsets_to_txn(int16_t v);
void cell_end_txn(int16_t v);
void cell_write_txn_markers(int16_t v);
void cell_txn_offset_commit(int16_t v);
void cell_describe_transactions(int16_t v);
void cell_list_transactions(int16_t v);
void cell_describe_topic_partitions(int16_t v);
void cell_offset_for_leader_epoch(int16_t v);

// api_matrix_groups.cc
void cell_offset_commit(int16_t v);
void cell_offset_fetch(int16_t v);
void cell_find_coordinator(int16_t v);
void cell_join_group(int16_t v);
void cell_heartbeat(int16_t v);
void cell_leave_group(int16_t v);
void cell_sync_group(int16_t v);
void cell_describe_groups(int16_t v);
void cell_list_groups(int16_t v);
void cell_delete_groups(int16_t v);
void cell_offset_delete(int16_t v);

// api_matrix_admin.cc
void cell_api_versions(int16_t v);
void cell_create_topics(int16_t v);
void cell_delete_topics(int16_t v);
void cell_describe_configs(int16_t v);
void cell_alter_configs(int16_t v);
void cell_create_partitions(int16_t v);
void cell_elect_leaders(int16_t v);
void cell_alter_partition_reassignments(int16_t v);
void cell_list_partition_reassignments(int16_t v);
void cell_list_config_resources(int16_t v);
void cell_incremental_alter_configs(int16_t v);
void cell_describe_cluster(int16_t v);
void cell_describe_log_dirs(int16_t v);
void cell_alter_replica_log_dirs(int16_t v);
void cell_describe_quorum(int16_t v);
void cell_update_features(int16_t v);

// api_matrix_security.cc
void cell_sasl_handshake(int16_t v);
void cell_sasl_authenticate(int16_t v);
void cell_alter_user_scram_credentials(int16_t v);
void cell_describe_user_scram_credentials(int16_t v);
void cell_create_acls(int16_t v);
void cell_describe_acls(int16_t v);
void cell_delete_acls(int16_t v);
void cell_alter_client_quotas(int16_t v);
void cell_describe_client_quotas(int16_t v);

// api_matrix_brokerd.cc
void cell_create_mirror_links(int16_t v);
void cell_alter_mirror_links(int16_t v);
void cell_describe_mirror_links(int16_t v);
void cell_promote_mirror_topics(int16_t v);
void cell_alter_tenant_limits(int16_t v);
void cell_describe_tenant_limits(int16_t v);

}  // namespace api_matrix
