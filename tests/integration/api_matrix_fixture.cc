// The api_matrix fixture: the topics, ids and producer every cell starts from, and the
// helpers that make topics, joined groups and committed offsets.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "api_matrix.h"

namespace api_matrix {

bp::Records batch_records(int n, int64_t producer_id, int16_t epoch, int32_t seq) {
  brokerd::storage::BatchOptions o;
  o.producer_id = producer_id;
  o.producer_epoch = epoch;
  o.base_sequence = seq;
  brokerd::storage::BatchBuilder b(o);
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch()).count();
  for (int i = 0; i < n; ++i) b.add(now, "k" + std::to_string(i), "value-" + std::to_string(i));
  Bytes bytes = b.build();
  return bp::Records::of(brokerd::SharedBytes::copy_of(bytes));
}

void create_topic(const std::string& name, int32_t partitions, const std::string& cleanup_policy) {
  bp::CreateTopicsRequest req;
  bp::CreateTopicsRequest::CreatableTopic t;
  t.name = name;
  t.num_partitions = partitions;
  t.replication_factor = 1;
  if (!cleanup_policy.empty()) {
    bp::CreateTopicsRequest::CreatableTopicConfig c;
    c.name = "cleanup.policy";
    c.value = cleanup_policy;
    t.configs.push_back(c);
  }
  req.topics.push_back(t);
  req.timeout_ms = 10000;
  auto resp = exchange_new<bp::CreateTopicsResponse>(req, 4);
  expect(resp.topics.size() == 1, "CreateTopics setup: one topic expected");
  expect(resp.topics[0].error_code == 0 || resp.topics[0].error_code == 36,
         "CreateTopics setup " + name + ": error " + std::to_string(resp.topics[0].error_code));
}

std::pair<std::string, int32_t> join_group(const std::string& group) {
  bp::JoinGroupRequest req;
  req.group_id = group;
  req.session_timeout_ms = 30000;
  req.rebalance_timeout_ms = 30000;
  req.protocol_type = "consumer";
  bp::JoinGroupRequest::JoinGroupRequestProtocol p;
  p.name = "range";
  req.protocols.push_back(p);
  Conn c(g_host, g_port);
  auto resp = exchange<bp::JoinGroupResponse>(c, req, 5);
  if (resp.error_code == 79) {  // MEMBER_ID_REQUIRED
    req.member_id = resp.member_id;
    resp = exchange<bp::JoinGroupResponse>(c, req, 5);
  }
  expect(resp.error_code == 0, "JoinGroup setup " + group + ": error " + std::to_string(resp.error_code));
  bp::SyncGroupRequest sync;
  sync.group_id = group;
  sync.generation_id = resp.generation_id;
  sync.member_id = resp.member_id;
  bp::SyncGroupRequest::SyncGroupRequestAssignment a;
  a.member_id = resp.member_id;
  sync.assignments.push_back(a);
  auto sresp = exchange<bp::SyncGroupResponse>(c, sync, 3);
  expect(sresp.error_code == 0, "SyncGroup setup " + group + ": error " + std::to_string(sresp.error_code));
  return {resp.member_id, resp.generation_id};
}

void commit_offset(const std::string& group, int64_t offset) {
  bp::OffsetCommitRequest req;
  req.group_id = group;
  bp::OffsetCommitRequest::OffsetCommitRequestTopic t;
  t.name = kTopic;
  bp::OffsetCommitRequest::OffsetCommitRequestPartition p;
  p.partition_index = 0;
  p.committed_offset = offset;
  t.partitions.push_back(p);
  req.topics.push_back(t);
  auto resp = exchange_new<bp::OffsetCommitResponse>(req, 7);
  expect(resp.topics.size() == 1 && resp.topics[0].partitions.size() == 1 &&
             resp.topics[0].partitions[0].error_code == 0,
         "OffsetCommit setup " + group + " failed");
}

void setup() {
  create_topic(kTopic, kPartitions);
  create_topic(kCompactedTopic, 1, "compact");
  // Metadata v12 for the topic id and the node id.
  bp::MetadataRequest mreq;
  bp::MetadataRequest::MetadataRequestTopic mt;
  mt.name = kTopic;
  mreq.topics->push_back(mt);
  mt.name = kCompactedTopic;
  mreq.topics->push_back(mt);
  auto mresp = exchange_new<bp::MetadataResponse>(mreq, 12);
  expect(mresp.topics.size() == 2 && mresp.topics[0].error_code == 0, "Metadata setup: topic missing");
  g_topic_id = mresp.topics[0].topic_id;
  g_compacted_topic_id = mresp.topics[1].topic_id;
  expect(!g_topic_id.is_zero(), "Metadata setup: zero topic id");
  expect(!mresp.brokers.empty(), "Metadata setup: no brokers");
  g_node_id = mresp.brokers[0].node_id;

  bp::InitProducerIdRequest ireq;
  ireq.transactional_id = std::nullopt;
  ireq.transaction_timeout_ms = 60000;
  auto iresp = exchange_new<bp::InitProducerIdResponse>(ireq, 4);
  expect(iresp.error_code == 0, "InitProducerId setup: error " + std::to_string(iresp.error_code));
  g_producer_id = iresp.producer_id;
  g_producer_epoch = iresp.producer_epoch;

  // Plain records in every partition, idempotent ones in partition 0.
  bp::ProduceRequest preq;
  preq.acks = -1;
  preq.timeout_ms = 10000;
  bp::ProduceRequest::TopicProduceData td;
  td.name = kTopic;
  for (int32_t p = 0; p < kPartitions; ++p) {
    bp::ProduceRequest::PartitionProduceData pd;
    pd.index = p;
    pd.records = p == 0 ? batch_records(5, g_producer_id, g_producer_epoch, 0) : batch_records(5);
    td.partition_data.push_back(pd);
  }
  preq.topic_data.push_back(td);
  auto presp = exchange_new<bp::ProduceResponse>(preq, 8);
  for (const auto& t : presp.responses) {
    for (const auto& p : t.partition_responses) {
      expect(p.error_code == 0, "Produce setup: error " + std::to_string(p.error_code));
    }
  }
}

std::string vname(const char* prefix, int16_t v) { return std::string(prefix) + "-v" + std::to_string(v); }

}  // namespace api_matrix
