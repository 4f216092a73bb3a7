// The api_matrix cells of the admin APIs: ApiVersions, topics and partitions, configs,
// leaders and reassignments, the cluster, its log dirs and its metadata quorum.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api_matrix.h"

namespace api_matrix {

void cell_api_versions(int16_t v) {
  bp::ApiVersionsRequest req;
  if (v >= 3) {
    req.client_software_name = "api-matrix";
    req.client_software_version = "1.0";
  }
  auto resp = check_cell<bp::ApiVersionsResponse>(req, v);
  expect(resp.error_code == 0, "ApiVersions: error " + std::to_string(resp.error_code));
  expect(!resp.api_keys.empty(), "ApiVersions: no api keys");
}

void cell_create_topics(int16_t v) {
  bp::CreateTopicsRequest req;
  req.timeout_ms = 10000;
  bp::CreateTopicsRequest::CreatableTopic t;
  t.name = vname("matrix-ct", v);
  t.num_partitions = 2;
  t.replication_factor = 1;
  bp::CreateTopicsRequest::CreatableTopicConfig c;
  c.name = "retention.ms";
  c.value = "3600000";
  t.configs.push_back(c);
  req.topics.push_back(t);
  bp::CreateTopicsRequest::CreatableTopic dup;  // exists already: per-topic error
  dup.name = kTopic;
  dup.num_partitions = 1;
  dup.replication_factor = 1;
  req.topics.push_back(dup);
  bp::CreateTopicsRequest::CreatableTopic defaults;  // broker defaults (v4+)
  defaults.name = vname("matrix-ctd", v);
  defaults.num_partitions = v >= 4 ? -1 : 1;
  defaults.replication_factor = v >= 4 ? -1 : 1;
  req.topics.push_back(defaults);
  auto resp = check_cell<bp::CreateTopicsResponse>(req, v);
  expect(resp.topics.size() == 3, "CreateTopics: 3 topics expected");
  expect(resp.topics[0].error_code == 0, "CreateTopics: error " + std::to_string(resp.topics[0].error_code));
  if (v >= 1) {
    bp::CreateTopicsRequest vo = req;
    vo.validate_only = true;
    vo.topics.resize(1);
    vo.topics[0].name = vname("matrix-ctv", v);
    check_cell<bp::CreateTopicsResponse>(vo, v);
  }
}

void cell_delete_topics(int16_t v) {
  std::string a = vname("matrix-dt", v), b = vname("matrix-dtb", v);
  create_topic(a, 1);
  create_topic(b, 1);
  bp::DeleteTopicsRequest req;
  req.timeout_ms = 10000;
  if (v <= 5) {
    req.topic_names = {a, b, "matrix-no-such-topic"};
  } else {
    // b by id: look it up first
    bp::MetadataRequest m;
    bp::MetadataRequest::MetadataRequestTopic mt;
    mt.name = b;
    m.topics->push_back(mt);
    auto mr = exchange_new<bp::MetadataResponse>(m, 12);
    expect(mr.topics.size() == 1 && !mr.topics[0].topic_id.is_zero(), "DeleteTopics: no id for " + b);
    bp::DeleteTopicsRequest::DeleteTopicState s1, s2, s3, s4;
    s1.name = a;
    s2.topic_id = mr.topics[0].topic_id;
    s3.name = "matrix-no-such-topic";
    s4.topic_id = kUnknownTopicId;
    req.topics = {s1, s2, s3, s4};
  }
  auto resp = check_cell<bp::DeleteTopicsResponse>(req, v);
  expect(resp.responses.size() == (v <= 5 ? 3u : 4u), "DeleteTopics: one result per topic expected");
  expect(resp.responses[0].error_code == 0, "DeleteTopics: error " + std::to_string(resp.responses[0].error_code));
}

void cell_describe_configs(int16_t v) {
  bp::DescribeConfigsRequest req;
  bp::DescribeConfigsRequest::DescribeConfigsResource topic, broker, missing, keys;
  topic.resource_type = 2;
  topic.resource_name = kTopic;
  topic.configuration_keys = std::nullopt;
  broker.resource_type = 4;
  broker.resource_name = std::to_string(g_node_id);
  broker.configuration_keys = std::nullopt;
  missing.resource_type = 2;
  missing.resource_name = "matrix-no-such-topic";
  keys.resource_type = 2;
  keys.resource_name = kTopic;
  keys.configuration_keys = std::vector<std::string>{"retention.ms", "cleanup.policy"};
  req.resources = {topic, broker, missing, keys};
  if (v >= 1) req.include_synonyms = true;
  if (v >= 3) req.include_documentation = true;
  auto resp = check_cell<bp::DescribeConfigsResponse>(req, v);
  expect(resp.results.size() == 4, "DescribeConfigs: 4 results expected");
  expect(resp.results[0].error_code == 0, "DescribeConfigs: error " + std::to_string(resp.results[0].error_code));
}

void cell_alter_configs(int16_t v) {
  std::string topic = vname("matrix-ac", v);
  create_topic(topic, 1);
  bp::AlterConfigsRequest req;
  bp::AlterConfigsRequest::AlterConfigsResource r, bad, missing;
  r.resource_type = 2;
  r.resource_name = topic;
  bp::AlterConfigsRequest::AlterableConfig c;
  c.name = "retention.ms";
  c.value = "7200000";
  r.configs.push_back(c);
  bad = r;
  bad.configs[0].value = "not-a-number";
  missing = r;
  missing.resource_name = "matrix-no-such-topic";
  req.resources = {r, missing};
  auto resp = check_cell<bp::AlterConfigsResponse>(req, v);
  expect(resp.responses.size() == 2, "AlterConfigs: 2 results expected");
  expect(resp.responses[0].error_code == 0, "AlterConfigs: error " + std::to_string(resp.responses[0].error_code));
  bp::AlterConfigsRequest invalid;
  invalid.resources = {bad};
  auto r2 = check_cell<bp::AlterConfigsResponse>(invalid, v);
  expect(r2.responses.size() == 1 && r2.responses[0].error_code != 0, "AlterConfigs: bad value accepted");
}

void cell_create_partitions(int16_t v) {
  std::string topic = vname("matrix-cp", v);
  create_topic(topic, 1);
  bp::CreatePartitionsRequest req;
  req.timeout_ms = 10000;
  bp::CreatePartitionsRequest::CreatePartitionsTopic t, shrink, missing;
  t.name = topic;
  t.count = 3;
  t.assignments = std::nullopt;
  shrink.name = kTopic;
  shrink.count = 1;  // INVALID_PARTITIONS
  shrink.assignments = std::nullopt;
  missing.name = "matrix-no-such-topic";
  missing.count = 2;
  missing.assignments = std::nullopt;
  req.topics = {t, shrink, missing};
  auto resp = check_cell<bp::CreatePartitionsResponse>(req, v);
  expect(resp.results.size() == 3, "CreatePartitions: 3 results expected");
  expect(resp.results[0].error_code == 0, "CreatePartitions: error " + std::to_string(resp.results[0].error_code));
}

void cell_elect_leaders(int16_t v) {
  // One node: every partition is led by its only (preferred) replica.
  bp::ElectLeadersRequest req;
  req.election_type = 0;
  req.timeout_ms = 10000;
  auto& t = req.topic_partitions.emplace().emplace_back();
  t.topic = kTopic;
  t.partitions = {0, 999};
  auto resp = check_cell<bp::ElectLeadersResponse>(req, v);
  expect(resp.error_code == 0, "ElectLeaders: error " + std::to_string(resp.error_code));
  expect(resp.replica_election_results.size() == 1 && resp.replica_election_results[0].partition_result.size() == 2,
         "ElectLeaders: 2 partition results expected");
  const auto& r = resp.replica_election_results[0].partition_result;
  expect(r[0].error_code == bp::code(bp::ErrorCode::election_not_needed),
         "ElectLeaders: partition 0 answered " + std::to_string(r[0].error_code));
  expect(r[1].error_code == bp::code(bp::ErrorCode::unknown_topic_or_partition),
         "ElectLeaders: partition 999 answered " + std::to_string(r[1].error_code));
}

void cell_alter_partition_reassignments(int16_t v) {
  // One node: the only replica can stay where it is; an unregistered broker is refused, and
  // there is nothing to cancel.
  bp::AlterPartitionReassignmentsRequest req;
  req.timeout_ms = 10000;
  if (v >= 1) req.allow_replication_factor_change = false;
  auto& t = req.topics.emplace_back();
  t.name = kTopic;
  auto& same = t.partitions.emplace_back();
  same.partition_index = 0;
  same.replicas = std::vector<int32_t>{g_node_id};
  auto& elsewhere = t.partitions.emplace_back();
  elsewhere.partition_index = 1;
  elsewhere.replicas = std::vector<int32_t>{g_node_id + 100};
  auto& cancel = t.partitions.emplace_back();
  cancel.partition_index = 2;
  auto resp = check_cell<bp::AlterPartitionReassignmentsResponse>(req, v);
  expect(resp.error_code == 0, "AlterPartitionReassignments: error " + std::to_string(resp.error_code));
  expect(resp.responses.size() == 1 && resp.responses[0].partitions.size() == 3,
         "AlterPartitionReassignments: 3 partition results expected");
  const auto& r = resp.responses[0].partitions;
  expect(r[0].error_code == 0, "AlterPartitionReassignments: partition 0 answered " + std::to_string(r[0].error_code));
  expect(r[1].error_code == bp::code(bp::ErrorCode::invalid_replica_assignment),
         "AlterPartitionReassignments: partition 1 answered " + std::to_string(r[1].error_code));
  expect(r[2].error_code == bp::code(bp::ErrorCode::no_reassignment_in_progress),
         "AlterPartitionReassignments: partition 2 answered " + std::to_string(r[2].error_code));
}

void cell_list_partition_reassignments(int16_t v) {
  bp::ListPartitionReassignmentsRequest all;
  auto resp = check_cell<bp::ListPartitionReassignmentsResponse>(all, v);
  expect(resp.error_code == 0 && resp.topics.empty(), "ListPartitionReassignments: none expected");
  bp::ListPartitionReassignmentsRequest named;
  auto& t = named.topics.emplace().emplace_back();
  t.name = kTopic;
  t.partition_indexes = {0, 999};
  resp = check_cell<bp::ListPartitionReassignmentsResponse>(named, v);
  expect(resp.error_code == 0 && resp.topics.empty(), "ListPartitionReassignments: none expected for named");
}

void cell_list_config_resources(int16_t v) {
  bp::ListConfigResourcesRequest req;
  auto resp = check_cell<bp::ListConfigResourcesResponse>(req, v);
  expect(resp.error_code == 0, "ListConfigResources: error " + std::to_string(resp.error_code));
  if (v == 0) {  // client-metrics subscriptions: there are none
    expect(resp.config_resources.empty(), "ListConfigResources v0: client-metrics resources listed");
    return;
  }
  bool topic = false, broker = false;
  for (const auto& r : resp.config_resources) {
    topic = topic || (r.resource_type == 2 && r.resource_name == kTopic);
    broker = broker || r.resource_type == 4;
  }
  expect(topic && broker, "ListConfigResources: the matrix topic or the broker is missing");
  bp::ListConfigResourcesRequest loggers;
  loggers.resource_types = {8};
  expect(check_cell<bp::ListConfigResourcesResponse>(loggers, v).error_code ==
             bp::code(bp::ErrorCode::invalid_request),
         "ListConfigResources: broker loggers accepted");
}

void cell_incremental_alter_configs(int16_t v) {
  std::string topic = vname("matrix-iac", v);
  create_topic(topic, 1);
  bp::IncrementalAlterConfigsRequest req;
  bp::IncrementalAlterConfigsRequest::AlterConfigsResource r, missing;
  r.resource_type = 2;
  r.resource_name = topic;
  bp::IncrementalAlterConfigsRequest::AlterableConfig set, del, bad;
  set.name = "retention.ms";
  set.config_operation = 0;
  set.value = "7200000";
  del.name = "segment.ms";
  del.config_operation = 1;
  del.value = std::nullopt;
  r.configs = {set, del};
  missing = r;
  missing.resource_name = "matrix-no-such-topic";
  req.resources = {r, missing};
  auto resp = check_cell<bp::IncrementalAlterConfigsResponse>(req, v);
  expect(resp.responses.size() == 2, "IncrementalAlterConfigs: 2 results expected");
  expect(resp.responses[0].error_code == 0,
         "IncrementalAlterConfigs: error " + std::to_string(resp.responses[0].error_code));
  bp::IncrementalAlterConfigsRequest invalid;
  bad.name = "retention.ms";
  bad.config_operation = 0;
  bad.value = "not-a-number";
  r.configs = {bad};
  invalid.resources = {r};
  check_cell<bp::IncrementalAlterConfigsResponse>(invalid, v);
  // A dynamic broker config: the cluster-wide default of one that may change at runtime,
  // set then deleted; one that needs a restart is refused (INVALID_REQUEST, as Kafka).
  bp::IncrementalAlterConfigsRequest broker;
  bp::IncrementalAlterConfigsRequest::AlterConfigsResource cluster_default;
  cluster_default.resource_type = 4;
  cluster_default.resource_name = "";
  set.name = "log.retention.ms";
  cluster_default.configs = {set};
  broker.resources = {cluster_default};
  auto set_resp = check_cell<bp::IncrementalAlterConfigsResponse>(broker, v);
  expect(set_resp.responses.size() == 1 && set_resp.responses[0].error_code == 0,
         "IncrementalAlterConfigs: a dynamic broker default refused");
  del.name = "log.retention.ms";
  broker.resources[0].configs = {del};
  check_cell<bp::IncrementalAlterConfigsResponse>(broker, v);
  set.name = "log.dirs";
  set.value = "/elsewhere";
  broker.resources[0].configs = {set};
  auto refused = check_cell<bp::IncrementalAlterConfigsResponse>(broker, v);
  expect(refused.responses.size() == 1 && refused.responses[0].error_code == bp::code(bp::ErrorCode::invalid_request),
         "IncrementalAlterConfigs: a broker config that needs a restart accepted");
}

void cell_describe_cluster(int16_t v) {
  bp::DescribeClusterRequest req;
  req.include_cluster_authorized_operations = true;
  auto resp = check_cell<bp::DescribeClusterResponse>(req, v);
  expect(resp.error_code == 0, "DescribeCluster: error " + std::to_string(resp.error_code));
  expect(!resp.brokers.empty(), "DescribeCluster: no brokers");
  if (v >= 2) {  // fenced brokers asked for: the one node serves, so none is fenced
    bp::DescribeClusterRequest fenced = req;
    fenced.include_fenced_brokers = true;
    auto r2 = check_cell<bp::DescribeClusterResponse>(fenced, v);
    expect(r2.brokers.size() == resp.brokers.size() && !r2.brokers[0].is_fenced, "DescribeCluster: fenced listing");
  }
  if (v >= 1) {  // controller endpoints (mismatched) and an unknown endpoint type
    for (int8_t type : {int8_t(2), int8_t(7)}) {
      bp::DescribeClusterRequest other = req;
      other.endpoint_type = type;
      auto r2 = check_cell<bp::DescribeClusterResponse>(other, v);
      expect(r2.error_code != 0, "DescribeCluster: endpoint type " + std::to_string(type) + " accepted");
    }
  }
}

void cell_describe_log_dirs(int16_t v) {
  // Every partition, then one named partition and one that does not exist.
  bp::DescribeLogDirsRequest all;
  all.topics.reset();
  auto resp = check_cell<bp::DescribeLogDirsResponse>(all, v);
  expect(!resp.results.empty(), "DescribeLogDirs: no log dir");
  bool found = false;
  for (const auto& r : resp.results)
    for (const auto& t : r.topics) found = found || (t.name == kTopic && !t.partitions.empty());
  expect(found, "DescribeLogDirs: the matrix topic is not listed");
  if (v >= 4) expect(resp.results[0].total_bytes > 0, "DescribeLogDirs: no total bytes in v4");
  bp::DescribeLogDirsRequest some;
  bp::DescribeLogDirsRequest::DescribableLogDirTopic t;
  t.topic = kTopic;
  t.partitions = {0, 99};
  some.topics = std::vector<bp::DescribeLogDirsRequest::DescribableLogDirTopic>{t};
  auto r2 = check_cell<bp::DescribeLogDirsResponse>(some, v);
  size_t parts = 0;
  for (const auto& r : r2.results)
    for (const auto& tt : r.topics) parts += tt.partitions.size();
  expect(parts == 1, "DescribeLogDirs: expected exactly partition 0, got " + std::to_string(parts));
}

void cell_alter_replica_log_dirs(int16_t v) {
  // The node's one log dir, as DescribeLogDirs names it.
  bp::DescribeLogDirsRequest describe;
  describe.topics.reset();
  auto dirs = exchange_new<bp::DescribeLogDirsResponse>(describe, 1);
  expect(!dirs.results.empty(), "AlterReplicaLogDirs setup: no log dir");
  bp::AlterReplicaLogDirsRequest req;
  bp::AlterReplicaLogDirsRequest::AlterReplicaLogDir here, nowhere;
  here.path = dirs.results[0].log_dir;  // where partition 0 is: nothing to move
  bp::AlterReplicaLogDirsRequest::AlterReplicaLogDirTopic t;
  t.name = kTopic;
  t.partitions = {0, 99};
  here.topics.push_back(t);
  nowhere.path = "/matrix/no-such-log-dir";
  t.partitions = {1};
  nowhere.topics.push_back(t);
  req.dirs = {here, nowhere};
  auto resp = check_cell<bp::AlterReplicaLogDirsResponse>(req, v);
  std::vector<int16_t> codes;
  for (const auto& r : resp.results)
    for (const auto& p : r.partitions) codes.push_back(p.error_code);
  expect(codes == std::vector<int16_t>{0, 9, 57},
         "AlterReplicaLogDirs: expected NONE, REPLICA_NOT_AVAILABLE, LOG_DIR_NOT_FOUND, got " +
             std::to_string(codes.size()) + " codes");
}

void cell_describe_quorum(int16_t v) {
  bp::DescribeQuorumRequest req;
  auto& t = req.topics.emplace_back();
  t.topic_name = "__cluster_metadata";
  t.partitions.emplace_back().partition_index = 0;
  auto resp = check_cell<bp::DescribeQuorumResponse>(req, v);
  expect(resp.error_code == 0, "DescribeQuorum: error " + std::to_string(resp.error_code));
  expect(resp.topics.size() == 1 && resp.topics[0].partitions.size() == 1 &&
             resp.topics[0].partitions[0].leader_id >= 0,
         "DescribeQuorum: the single node should lead its quorum");
}

void cell_update_features(int16_t v) {
  // The level a new cluster has (v0 cannot validate only: it writes the same level again).
  bp::UpdateFeaturesRequest req;
  auto& u = req.feature_updates.emplace_back();
  u.feature = "transaction.version";
  u.max_version_level = 2;
  if (v >= 1) req.validate_only = true;
  auto resp = check_cell<bp::UpdateFeaturesResponse>(req, v);
  expect(resp.error_code == 0, "UpdateFeatures: error " + std::to_string(resp.error_code));
  expect(resp.results.size() == (v <= 1 ? 1u : 0u), "UpdateFeatures: one result per feature up to v1, none after");
  // A level no broker supports is refused, with its reason.
  u.max_version_level = 3;
  auto refused = check_cell<bp::UpdateFeaturesResponse>(req, v);
  expect(refused.error_code == 95 && refused.error_message.has_value(), "UpdateFeatures: INVALID_UPDATE_VERSION for 3");
}

}  // namespace api_matrix
#include "brokerd/protocol/messages/update_features_request.h"
#include "brokerd/protocol/messages/update_features_response.h"
