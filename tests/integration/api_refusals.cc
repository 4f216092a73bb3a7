// api_refusals: every API the broker advertises, asked by a principal that holds no ACL, is
// refused with TOPIC_, GROUP_, CLUSTER_ or TRANSACTIONAL_ID_AUTHORIZATION_FAILED, at
// the API's newest version, over one SASL/PLAIN connection per request. An advertised API
// with no case here fails the run, so a new API cannot be served without its refusal being
// tested. A few APIs are exempt, each with the reason (they authorize nothing, or they leave
// out what the principal may not see instead of refusing).
//
// Usage: api_refusals HOST PORT USER PASSWORD TOPIC GROUP (TOPIC exists; the user has no
// ACL). Prints one line per API and a summary; exit code 1 when anything failed.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_table.h"
#include "brokerd/protocol/messages/update_features_request.h"
#include "brokerd/protocol/messages/update_features_response.h"
#include "brokerd/storage/batch_builder.h"
#include "wire_client.h"

namespace {

using namespace wire_client;
using Codes = std::vector<int16_t>;

constexpr int16_t kTopicDenied = 29, kGroupDenied = 30, kClusterDenied = 31, kTxnDenied = 53;
const std::string kTxnId = "refused-txn";

std::string g_topic, g_group;

// Every error code of a list of results, each with an error_code.
template <typename List>
void add(Codes& out, const List& items) {
  for (const auto& i : items) out.push_back(i.error_code);
}
// ... and of the lists nested one level down in `field`.
template <typename List, typename Inner>
void add_nested(Codes& out, const List& items, Inner inner) {
  for (const auto& i : items) add(out, inner(i));
}

bp::Records one_batch() {
  brokerd::storage::BatchBuilder b(brokerd::storage::BatchOptions{});
  b.add(0, "k", "v");
  Bytes bytes = b.build();
  return bp::Records::of(brokerd::SharedBytes::copy_of(bytes));
}

template <typename Resp, typename Req>
Resp ask(const Req& req, int16_t v) {
  return exchange_new<Resp>(req, v);
}

// A request with nothing to fill, refused as a whole.
template <typename Req, typename Resp>
Codes top_level(int16_t v) {
  return Codes{ask<Resp>(Req{}, v).error_code};
}

// AlterConfigs and IncrementalAlterConfigs of the topic's retention.
template <typename Req, typename Resp>
Codes alter_topic_config(int16_t v) {
  Req r;
  auto& res = r.resources.emplace_back();
  res.resource_type = 2;
  res.resource_name = g_topic;
  auto& cfg = res.configs.emplace_back();
  cfg.name = "retention.ms";
  cfg.value = "1000";
  Codes c;
  add(c, ask<Resp>(r, v).responses);
  return c;
}

struct Case {
  int16_t version;
  int16_t refusal;
  std::function<Codes(int16_t)> run;
};

const std::map<int16_t, Case>& cases() {
  static const std::map<int16_t, Case> m = {
      {0, {12, kTopicDenied, [](int16_t v) {
         bp::ProduceRequest r;
         r.acks = -1;
         r.timeout_ms = 5000;
         auto& t = r.topic_data.emplace_back();
         t.name = g_topic;
         auto& p = t.partition_data.emplace_back();
         p.records = one_batch();
         Codes c;
         add_nested(c, ask<bp::ProduceResponse>(r, v).responses, [](const auto& x) { return x.partition_responses; });
         return c;
       }}},
      {1, {12, kTopicDenied, [](int16_t v) {
         bp::FetchRequest r;
         r.max_bytes = 1 << 20;
         auto& t = r.topics.emplace_back();
         t.topic = g_topic;
         t.partitions.emplace_back().partition_max_bytes = 1 << 20;
         auto resp = ask<bp::FetchResponse>(r, v);
         Codes c{resp.error_code};
         add_nested(c, resp.responses, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {2, {11, kTopicDenied, [](int16_t v) {
         bp::ListOffsetsRequest r;
         r.replica_id = -1;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.partitions.emplace_back().timestamp = -1;
         Codes c;
         add_nested(c, ask<bp::ListOffsetsResponse>(r, v).topics, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {3, {12, kTopicDenied, [](int16_t v) {
         bp::MetadataRequest r;
         r.topics.emplace().emplace_back().name = g_topic;
         Codes c;
         add(c, ask<bp::MetadataResponse>(r, v).topics);
         return c;
       }}},
      {8, {9, kGroupDenied, [](int16_t v) {
         bp::OffsetCommitRequest r;
         r.group_id = g_group;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.partitions.emplace_back().committed_offset = 1;
         Codes c;
         add_nested(c, ask<bp::OffsetCommitResponse>(r, v).topics, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {9, {9, kGroupDenied, [](int16_t v) {
         bp::OffsetFetchRequest r;
         r.groups.emplace_back().group_id = g_group;
         Codes c;
         add(c, ask<bp::OffsetFetchResponse>(r, v).groups);
         return c;
       }}},
      {10, {4, kGroupDenied, [](int16_t v) {
         bp::FindCoordinatorRequest r;
         r.coordinator_keys = {g_group};
         Codes c;
         add(c, ask<bp::FindCoordinatorResponse>(r, v).coordinators);
         return c;
       }}},
      {11, {9, kGroupDenied, [](int16_t v) {
         bp::JoinGroupRequest r;
         r.group_id = g_group;
         r.session_timeout_ms = 10000;
         r.rebalance_timeout_ms = 10000;
         r.protocol_type = "consumer";
         r.protocols.emplace_back().name = "range";
         return Codes{ask<bp::JoinGroupResponse>(r, v).error_code};
       }}},
      {12, {4, kGroupDenied, [](int16_t v) {
         bp::HeartbeatRequest r;
         r.group_id = g_group;
         r.member_id = "m";
         return Codes{ask<bp::HeartbeatResponse>(r, v).error_code};
       }}},
      {13, {5, kGroupDenied, [](int16_t v) {
         bp::LeaveGroupRequest r;
         r.group_id = g_group;
         r.members.emplace_back().member_id = "m";
         return Codes{ask<bp::LeaveGroupResponse>(r, v).error_code};
       }}},
      {14, {5, kGroupDenied, [](int16_t v) {
         bp::SyncGroupRequest r;
         r.group_id = g_group;
         r.member_id = "m";
         r.protocol_type = "consumer";
         r.protocol_name = "range";
         return Codes{ask<bp::SyncGroupResponse>(r, v).error_code};
       }}},
      {15, {5, kGroupDenied, [](int16_t v) {
         bp::DescribeGroupsRequest r;
         r.groups = {g_group};
         Codes c;
         add(c, ask<bp::DescribeGroupsResponse>(r, v).groups);
         return c;
       }}},
      {19, {7, kTopicDenied, [](int16_t v) {
         bp::CreateTopicsRequest r;
         r.timeout_ms = 5000;
         auto& t = r.topics.emplace_back();
         t.name = g_topic + "-new";
         t.num_partitions = 1;
         t.replication_factor = 1;
         Codes c;
         add(c, ask<bp::CreateTopicsResponse>(r, v).topics);
         return c;
       }}},
      {20, {5, kTopicDenied, [](int16_t v) {  // v6 names topics by id too; v5 by name
         bp::DeleteTopicsRequest r;
         r.timeout_ms = 5000;
         r.topic_names = {g_topic};
         Codes c;
         add(c, ask<bp::DeleteTopicsResponse>(r, v).responses);
         return c;
       }}},
      {21, {2, kTopicDenied, [](int16_t v) {
         bp::DeleteRecordsRequest r;
         r.timeout_ms = 5000;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.partitions.emplace_back().offset = 0;
         Codes c;
         add_nested(c, ask<bp::DeleteRecordsResponse>(r, v).topics, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {22, {5, kClusterDenied, [](int16_t v) {  // idempotent: IDEMPOTENT_WRITE or WRITE on some topic
         bp::InitProducerIdRequest r;
         r.transactional_id = std::nullopt;
         r.transaction_timeout_ms = 60000;
         return Codes{ask<bp::InitProducerIdResponse>(r, v).error_code};
       }}},
      {23, {4, kTopicDenied, [](int16_t v) {
         bp::OffsetForLeaderEpochRequest r;
         r.replica_id = -1;
         auto& t = r.topics.emplace_back();
         t.topic = g_topic;
         t.partitions.emplace_back().leader_epoch = 0;
         Codes c;
         add_nested(c, ask<bp::OffsetForLeaderEpochResponse>(r, v).topics, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {29, {3, kClusterDenied, [](int16_t v) {
         bp::DescribeAclsRequest r;
         r.resource_type_filter = 1;  // ANY
         r.pattern_type_filter = 1;
         r.operation = 1;
         r.permission_type = 1;
         return Codes{ask<bp::DescribeAclsResponse>(r, v).error_code};
       }}},
      {30, {3, kClusterDenied, [](int16_t v) {
         bp::CreateAclsRequest r;
         auto& a = r.creations.emplace_back();
         a.resource_type = 2;
         a.resource_name = g_topic;
         a.resource_pattern_type = 3;
         a.principal = "User:someone";
         a.host = "*";
         a.operation = 3;
         a.permission_type = 3;
         Codes c;
         add(c, ask<bp::CreateAclsResponse>(r, v).results);
         return c;
       }}},
      {31, {3, kClusterDenied, [](int16_t v) {
         bp::DeleteAclsRequest r;
         auto& f = r.filters.emplace_back();
         f.resource_type_filter = 2;
         f.resource_name_filter = g_topic;
         f.pattern_type_filter = 3;
         f.operation = 1;
         f.permission_type = 1;
         Codes c;
         add(c, ask<bp::DeleteAclsResponse>(r, v).filter_results);
         return c;
       }}},
      {32, {4, kTopicDenied, [](int16_t v) {
         bp::DescribeConfigsRequest r;
         auto& res = r.resources.emplace_back();
         res.resource_type = 2;
         res.resource_name = g_topic;
         res.configuration_keys = std::nullopt;
         Codes c;
         add(c, ask<bp::DescribeConfigsResponse>(r, v).results);
         return c;
       }}},
      {33, {2, kTopicDenied, alter_topic_config<bp::AlterConfigsRequest, bp::AlterConfigsResponse>}},
      {34, {2, kClusterDenied, [](int16_t v) {
         bp::AlterReplicaLogDirsRequest r;
         auto& d = r.dirs.emplace_back();
         d.path = "/somewhere";
         auto& t = d.topics.emplace_back();
         t.name = g_topic;
         t.partitions = {0};
         Codes c;
         add_nested(c, ask<bp::AlterReplicaLogDirsResponse>(r, v).results, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {35, {4, kClusterDenied, [](int16_t v) {
         bp::DescribeLogDirsRequest r;
         r.topics.reset();
         return Codes{ask<bp::DescribeLogDirsResponse>(r, v).error_code};
       }}},
      {37, {3, kTopicDenied, [](int16_t v) {
         bp::CreatePartitionsRequest r;
         r.timeout_ms = 5000;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.count = 2;
         Codes c;
         add(c, ask<bp::CreatePartitionsResponse>(r, v).results);
         return c;
       }}},
      {42, {2, kGroupDenied, [](int16_t v) {
         bp::DeleteGroupsRequest r;
         r.groups_names = {g_group};
         Codes c;
         add(c, ask<bp::DeleteGroupsResponse>(r, v).results);
         return c;
       }}},
      {43, {2, kClusterDenied, [](int16_t v) {
         bp::ElectLeadersRequest r;
         r.timeout_ms = 5000;
         auto& t = r.topic_partitions.emplace().emplace_back();
         t.topic = g_topic;
         t.partitions = {0};
         return Codes{ask<bp::ElectLeadersResponse>(r, v).error_code};
       }}},
      {44, {1, kTopicDenied, alter_topic_config<bp::IncrementalAlterConfigsRequest, bp::IncrementalAlterConfigsResponse>}},
      {45, {1, kClusterDenied, [](int16_t v) {
         bp::AlterPartitionReassignmentsRequest r;
         r.timeout_ms = 5000;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.partitions.emplace_back().replicas = std::vector<int32_t>{1};
         return Codes{ask<bp::AlterPartitionReassignmentsResponse>(r, v).error_code};
       }}},
      {46, {0, kClusterDenied, top_level<bp::ListPartitionReassignmentsRequest, bp::ListPartitionReassignmentsResponse>}},
      {47, {0, kGroupDenied, [](int16_t v) {
         bp::OffsetDeleteRequest r;
         r.group_id = g_group;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.partitions.emplace_back().partition_index = 0;
         return Codes{ask<bp::OffsetDeleteResponse>(r, v).error_code};
       }}},
      {48, {1, kClusterDenied, top_level<bp::DescribeClientQuotasRequest, bp::DescribeClientQuotasResponse>}},
      {49, {1, kClusterDenied, [](int16_t v) {
         bp::AlterClientQuotasRequest r;
         auto& e = r.entries.emplace_back();
         auto& who = e.entity.emplace_back();
         who.entity_type = "user";
         who.entity_name = "someone";
         auto& op = e.ops.emplace_back();
         op.key = "producer_byte_rate";
         op.value = 1000;
         Codes c;
         add(c, ask<bp::AlterClientQuotasResponse>(r, v).entries);
         return c;
       }}},
      {50, {0, kClusterDenied, [](int16_t v) {
         bp::DescribeUserScramCredentialsRequest r;
         r.users = std::nullopt;
         return Codes{ask<bp::DescribeUserScramCredentialsResponse>(r, v).error_code};
       }}},
      {51, {0, kClusterDenied, [](int16_t v) {
         bp::AlterUserScramCredentialsRequest r;
         auto& d = r.deletions.emplace_back();
         d.name = "someone";
         d.mechanism = 1;
         Codes c;
         add(c, ask<bp::AlterUserScramCredentialsResponse>(r, v).results);
         return c;
       }}},
      {55, {2, kClusterDenied, [](int16_t v) {
         bp::DescribeQuorumRequest r;
         auto& t = r.topics.emplace_back();
         t.topic_name = "__cluster_metadata";
         t.partitions.emplace_back().partition_index = 0;
         return Codes{ask<bp::DescribeQuorumResponse>(r, v).error_code};
       }}},
      {61, {0, kTopicDenied, [](int16_t v) {
         bp::DescribeProducersRequest r;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.partition_indexes = {0};
         Codes c;
         add_nested(c, ask<bp::DescribeProducersResponse>(r, v).topics, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {24, {5, kClusterDenied, [](int16_t v) {  // v4+ is for brokers (CLUSTER_ACTION)
         bp::AddPartitionsToTxnRequest r;
         auto& t = r.transactions.emplace_back();
         t.transactional_id = kTxnId;
         t.verify_only = true;
         auto& topic = t.topics.emplace_back();
         topic.name = g_topic;
         topic.partitions = {0};
         return Codes{ask<bp::AddPartitionsToTxnResponse>(r, v).error_code};
       }}},
      {25, {4, kTxnDenied, [](int16_t v) {
         bp::AddOffsetsToTxnRequest r;
         r.transactional_id = kTxnId;
         r.group_id = g_group;
         return Codes{ask<bp::AddOffsetsToTxnResponse>(r, v).error_code};
       }}},
      {26, {4, kTxnDenied, [](int16_t v) {
         bp::EndTxnRequest r;
         r.transactional_id = kTxnId;
         r.committed = true;
         return Codes{ask<bp::EndTxnResponse>(r, v).error_code};
       }}},
      {27, {2, kClusterDenied, [](int16_t v) {
         bp::WriteTxnMarkersRequest r;
         auto& m = r.markers.emplace_back();
         m.producer_id = 1;
         auto& t = m.topics.emplace_back();
         t.name = g_topic;
         t.partition_indexes = {0};
         Codes c;
         add_nested(c, ask<bp::WriteTxnMarkersResponse>(r, v).markers[0].topics,
                    [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {28, {5, kTxnDenied, [](int16_t v) {
         bp::TxnOffsetCommitRequest r;
         r.transactional_id = kTxnId;
         r.group_id = g_group;
         auto& t = r.topics.emplace_back();
         t.name = g_topic;
         t.partitions.emplace_back().committed_offset = 1;
         Codes c;
         add_nested(c, ask<bp::TxnOffsetCommitResponse>(r, v).topics, [](const auto& x) { return x.partitions; });
         return c;
       }}},
      {65, {0, kTxnDenied, [](int16_t v) {
         bp::DescribeTransactionsRequest r;
         r.transactional_ids = {kTxnId};
         Codes c;
         add(c, ask<bp::DescribeTransactionsResponse>(r, v).transaction_states);
         return c;
       }}},
      {74, {1, kClusterDenied, top_level<bp::ListConfigResourcesRequest, bp::ListConfigResourcesResponse>}},
      {75, {0, kTopicDenied, [](int16_t v) {
         bp::DescribeTopicPartitionsRequest r;
         r.topics.emplace_back().name = g_topic;
         Codes c;
         add(c, ask<bp::DescribeTopicPartitionsResponse>(r, v).topics);
         return c;
       }}},
      {30000, {0, kClusterDenied, [](int16_t v) {
         bp::CreateMirrorLinksRequest r;
         auto& l = r.links.emplace_back();
         l.name = "link";
         l.source_bootstrap_servers = "127.0.0.1:1";
         l.topics = {g_topic};
         Codes c;
         add(c, ask<bp::CreateMirrorLinksResponse>(r, v).results);
         return c;
       }}},
      {30001, {0, kClusterDenied, [](int16_t v) {
         bp::AlterMirrorLinksRequest r;
         r.links.emplace_back().name = "link";
         Codes c;
         add(c, ask<bp::AlterMirrorLinksResponse>(r, v).results);
         return c;
       }}},
      {30002, {0, kClusterDenied, [](int16_t v) {
         bp::DescribeMirrorLinksRequest r;
         r.names = std::nullopt;
         return Codes{ask<bp::DescribeMirrorLinksResponse>(r, v).error_code};
       }}},
      {30003, {0, kClusterDenied, [](int16_t v) {
         bp::PromoteMirrorTopicsRequest r;
         r.link_name = "link";
         r.topics = std::nullopt;
         return Codes{ask<bp::PromoteMirrorTopicsResponse>(r, v).error_code};
       }}},
      {57, {1, kClusterDenied, [](int16_t v) {
         bp::UpdateFeaturesRequest r;
         auto& u = r.feature_updates.emplace_back();
         u.feature = "transaction.version";
         u.max_version_level = 2;
         r.validate_only = true;
         return Codes{ask<bp::UpdateFeaturesResponse>(r, v).error_code};
       }}},
      {30004, {0, kClusterDenied, [](int16_t v) {
         bp::AlterTenantLimitsRequest r;
         auto& e = r.entries.emplace_back();
         e.principal = "User:team";
         auto& op = e.ops.emplace_back();
         op.key = "max.topics";
         op.value = 1;
         Codes c;
         add(c, ask<bp::AlterTenantLimitsResponse>(r, v).entries);
         return c;
       }}},
      {30005, {0, kClusterDenied, top_level<bp::DescribeTenantLimitsRequest, bp::DescribeTenantLimitsResponse>}},
  };
  return m;
}

// Served without a refusal, each for its reason.
const std::map<int16_t, const char*>& exempt() {
  static const std::map<int16_t, const char*> m = {
      {16, "ListGroups leaves out the groups the principal may not describe"},
      {17, "SaslHandshake comes before a principal exists"},
      {18, "ApiVersions is served to anyone"},
      {36, "SaslAuthenticate comes before a principal exists"},
      {60, "DescribeCluster is served to anyone, as in Kafka (its authorized operations need DESCRIBE)"},
      {66, "ListTransactions leaves out the transactional ids the principal may not describe"},
  };
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s HOST PORT USER PASSWORD TOPIC GROUP\n", argv[0]);
    return 2;
  }
  g_host = argv[1];
  g_port = std::atoi(argv[2]);
  g_credentials = {"PLAIN", argv[3], argv[4]};
  g_topic = argv[5];
  g_group = argv[6];
  g_client_id = "api-refusals";
  std::vector<std::string> failures;
  bp::ApiVersionsRequest avreq;
  std::vector<bp::ApiVersionsResponse::ApiVersion> advertised;
  try {
    advertised = exchange_new<bp::ApiVersionsResponse>(avreq, 0).api_keys;
  } catch (const std::exception& e) {
    std::printf("FAIL ApiVersions: %s\n", e.what());
    return 1;
  }
  for (const auto& api : advertised) {
    const std::string name = api_name(api.api_key);
    if (auto ex = exempt().find(api.api_key); ex != exempt().end()) {
      std::printf("--   %s: %s\n", name.c_str(), ex->second);
      continue;
    }
    auto it = cases().find(api.api_key);
    if (it == cases().end()) {
      failures.push_back(name + ": advertised, but no refusal case");
      continue;
    }
    const Case& c = it->second;
    const int16_t v = std::min<int16_t>(std::max(c.version, api.min_version), api.max_version);
    try {
      const Codes codes = c.run(v);
      std::string got;
      for (auto code : codes) got += (got.empty() ? "" : ",") + std::to_string(code);
      const bool refused = std::find(codes.begin(), codes.end(), c.refusal) != codes.end();
      std::printf("%s %s v%d: %s\n", refused ? "ok  " : "FAIL", name.c_str(), v, got.c_str());
      if (!refused) failures.push_back(name + " v" + std::to_string(v) + ": expected " + std::to_string(c.refusal) +
                                       " among [" + got + "]");
    } catch (const std::exception& e) {
      std::printf("FAIL %s v%d: %s\n", name.c_str(), v, e.what());
      failures.push_back(name + " v" + std::to_string(v) + ": " + e.what());
    }
    std::fflush(stdout);
  }
  std::printf("refusals: %zu APIs advertised, %zu failures\n", advertised.size(), failures.size());
  for (const auto& f : failures) std::printf("  %s\n", f.c_str());
  return failures.empty() ? 0 : 1;
}
