// api_matrix: for every API the broker advertises and every version in its advertised range,
// sends a valid request to a live brokerd and checks that
//   - a response arrives (the connection is not closed) with the request's correlation id,
//   - its header has the right version (flexible or not; ApiVersions always v0),
//   - its body decodes with the generated response codec of that version, to the last byte,
//   - a second request on the same connection is still answered.
// Requests start from the default-constructed generated struct and fill what makes them
// meaningful: an existing topic (by id for the versions that name topics by id), partitions
// that exist and one that does not, joined groups with real member ids, a producer id.
//
// Usage: api_matrix HOST PORT. Prints one line per failure and a summary; exit code 1 when
// anything failed. The connection and its bounded waits are in wire_client.h.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_table.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_request.h"
#include "brokerd/protocol/messages/offset_for_leader_epoch_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/batch_builder.h"
#include "wire_client.h"

namespace bp = brokerd::protocol;
using brokerd::Bytes;

namespace {

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
// Fixture state
// ---------------------------------------------------------------------------------------

const std::string kTopic = "matrix";
const std::string kCompactedTopic = "matrix-compacted";
constexpr int32_t kPartitions = 3;
bp::Uuid g_topic_id;
bp::Uuid g_compacted_topic_id;
const bp::Uuid kUnknownTopicId = [] {
  bp::Uuid u;
  for (size_t i = 0; i < u.bytes.size(); ++i) u.bytes[i] = static_cast<uint8_t>(0xA0 + i);
  return u;
}();
int32_t g_node_id = 0;
int64_t g_producer_id = -1;
int16_t g_producer_epoch = -1;

bp::Records batch_records(int n, int64_t producer_id = -1, int16_t epoch = -1, int32_t seq = -1) {
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

void create_topic(const std::string& name, int32_t partitions, const std::string& cleanup_policy = "") {
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

// Joins `group` as the only member (JoinGroup v5, retrying with the assigned member id) and
// completes the generation with SyncGroup; returns {member_id, generation}.
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

// ---------------------------------------------------------------------------------------
// One request builder and checker per API
// ---------------------------------------------------------------------------------------

using Cell = std::function<void(int16_t)>;

std::string vname(const char* prefix, int16_t v) { return std::string(prefix) + "-v" + std::to_string(v); }

void cell_produce(int16_t v) {
  bp::ProduceRequest req;
  req.acks = -1;
  req.timeout_ms = 10000;
  bp::ProduceRequest::TopicProduceData td;
  if (v >= 13) td.topic_id = g_topic_id;  // KIP-516: topics by id
  else td.name = kTopic;
  bp::ProduceRequest::PartitionProduceData ok, missing;
  ok.index = 1;
  ok.records = batch_records(2);
  missing.index = 99;  // unknown partition: a per-partition error
  missing.records = batch_records(1);
  td.partition_data = {ok, missing};
  req.topic_data.push_back(td);
  bp::ProduceRequest::TopicProduceData unknown;
  if (v >= 13) unknown.topic_id = kUnknownTopicId;
  else unknown.name = "matrix-no-such-topic";
  bp::ProduceRequest::PartitionProduceData up;
  up.records = batch_records(1);
  unknown.partition_data.push_back(up);
  req.topic_data.push_back(unknown);
  auto resp = check_cell<bp::ProduceResponse>(req, v);
  expect(resp.responses.size() == 2, "Produce: 2 topics expected");
  expect(resp.responses[0].partition_responses.at(0).error_code == 0,
         "Produce: error " + std::to_string(resp.responses[0].partition_responses.at(0).error_code));
  expect(resp.responses[1].partition_responses.at(0).error_code == (v >= 13 ? 100 : 3),
         "Produce: unknown topic answered " + std::to_string(resp.responses[1].partition_responses.at(0).error_code));
  if (v >= 13) expect(resp.responses[0].topic_id == g_topic_id, "Produce: topic id not echoed");
  // A batch whose CRC does not match (CORRUPT_MESSAGE).
  bp::ProduceRequest corrupt;
  corrupt.acks = 1;
  corrupt.timeout_ms = 10000;
  bp::ProduceRequest::TopicProduceData ct;
  if (v >= 13) ct.topic_id = g_topic_id;
  else ct.name = kTopic;
  bp::ProduceRequest::PartitionProduceData cp;
  cp.index = 1;
  {
    brokerd::storage::BatchBuilder b;
    b.add(1000, "k", "v");
    Bytes bytes = b.build();
    bytes.back() ^= std::byte{0xFF};
    cp.records = bp::Records::of(brokerd::SharedBytes::copy_of(bytes));
  }
  ct.partition_data.push_back(cp);
  corrupt.topic_data.push_back(ct);
  auto r2 = check_cell<bp::ProduceResponse>(corrupt, v);
  expect(r2.responses.at(0).partition_responses.at(0).error_code != 0, "Produce: corrupt batch accepted");
  // A record without a key into a compacted topic (INVALID_RECORD).
  bp::ProduceRequest keyless = corrupt;
  keyless.topic_data[0].name = kCompactedTopic;
  keyless.topic_data[0].topic_id = g_compacted_topic_id;
  keyless.topic_data[0].partition_data[0].index = 0;
  {
    brokerd::storage::BatchBuilder b;
    std::string value = "no key";
    b.add(1000, std::nullopt, brokerd::storage::as_bytes(value));
    keyless.topic_data[0].partition_data[0].records = bp::Records::of(brokerd::SharedBytes::copy_of(b.build()));
  }
  auto r3 = check_cell<bp::ProduceResponse>(keyless, v);
  expect(r3.responses.at(0).partition_responses.at(0).error_code != 0, "Produce: keyless record in a compacted topic accepted");
}

void cell_fetch(int16_t v) {
  bp::FetchRequest req;
  req.max_wait_ms = 0;
  req.min_bytes = 0;
  req.max_bytes = 1 << 20;
  if (v >= 7) req.session_epoch = -1;
  bp::FetchRequest::FetchTopic t;
  if (v >= 13) t.topic_id = g_topic_id;
  else t.topic = kTopic;
  for (int32_t p : {0, 1, 2, 99}) {
    bp::FetchRequest::FetchPartition fp;
    fp.partition = p;
    fp.fetch_offset = p == 2 ? 1'000'000 : 0;  // partition 2: OFFSET_OUT_OF_RANGE
    fp.partition_max_bytes = 1 << 20;
    if (v >= 9) fp.current_leader_epoch = p == 1 ? 0 : -1;
    if (v >= 12) fp.last_fetched_epoch = p == 1 ? 0 : -1;
    t.partitions.push_back(fp);
  }
  req.topics.push_back(t);
  bp::FetchRequest::FetchTopic unknown;  // unknown topic: by id from v13
  if (v >= 13) unknown.topic_id = kUnknownTopicId;
  else unknown.topic = "matrix-no-such-topic";
  unknown.partitions.push_back(t.partitions[0]);
  req.topics.push_back(unknown);
  if (v >= 11) req.rack_id = "rack-a";
  auto resp = check_cell<bp::FetchResponse>(req, v);
  // A replica fetch (this node has no followers) and, v7+, unknown fetch sessions.
  bp::FetchRequest replica = req;
  if (v >= 15) replica.replica_state.replica_id = 2;
  else replica.replica_id = 2;
  check_cell<bp::FetchResponse>(replica, v);
  if (v >= 7) {
    bp::FetchRequest session = req;
    session.session_id = 12345;
    session.session_epoch = 1;
    check_cell<bp::FetchResponse>(session, v);
    bp::FetchRequest epoch = req;
    epoch.session_epoch = 3;
    check_cell<bp::FetchResponse>(epoch, v);
  }
  expect(resp.responses.size() == 2, "Fetch: 2 topics expected");
  if (v >= 13) expect(resp.responses[0].topic_id == g_topic_id, "Fetch: topic id not echoed");
  else expect(resp.responses[0].topic == kTopic, "Fetch: topic name not echoed");
  const auto& p0 = resp.responses[0].partitions.at(0);
  expect(p0.error_code == 0, "Fetch: partition 0 error " + std::to_string(p0.error_code));
  expect(p0.records.size() > 0, "Fetch: partition 0 returned no records");
}

void cell_list_offsets(int16_t v) {
  bp::ListOffsetsRequest req;
  req.replica_id = -1;
  if (v >= 10) req.timeout_ms = 10000;
  bp::ListOffsetsRequest::ListOffsetsTopic t;
  t.name = kTopic;
  // Earliest pending upload (nothing is tiered), max timestamp, or by timestamp 0.
  int64_t third = v >= 11 ? -6 : v >= 7 ? -3 : 0;
  int32_t idx = 0;
  for (int64_t ts : {int64_t(-1), int64_t(-2), third}) {
    bp::ListOffsetsRequest::ListOffsetsPartition p;
    p.partition_index = idx++;
    p.timestamp = ts;
    t.partitions.push_back(p);
  }
  bp::ListOffsetsRequest::ListOffsetsPartition missing;
  missing.partition_index = 99;
  missing.timestamp = -1;
  t.partitions.push_back(missing);
  req.topics.push_back(t);
  auto resp = check_cell<bp::ListOffsetsResponse>(req, v);
  expect(resp.topics.size() == 1 && resp.topics[0].partitions.size() == 4, "ListOffsets: 4 partitions expected");
  if (v >= 11) {
    const auto& pending = resp.topics[0].partitions[2];
    expect(pending.error_code == 0 && pending.offset == -1, "ListOffsets: no offset pending upload expected");
  }
}

void cell_metadata(int16_t v) {
  bp::MetadataRequest req;
  bp::MetadataRequest::MetadataRequestTopic byname, missing;
  byname.name = kTopic;
  req.topics->push_back(byname);
  if (v >= 10) {
    bp::MetadataRequest::MetadataRequestTopic byid;
    byid.name = std::nullopt;
    byid.topic_id = g_topic_id;
    req.topics->push_back(byid);
    bp::MetadataRequest::MetadataRequestTopic unknown_id;  // UNKNOWN_TOPIC_ID
    unknown_id.name = std::nullopt;
    unknown_id.topic_id = kUnknownTopicId;
    req.topics->push_back(unknown_id);
  }
  if (v >= 4) {
    req.allow_auto_topic_creation = false;
    missing.name = "matrix-absent";
    req.topics->push_back(missing);
  }
  if (v >= 8) req.include_topic_authorized_operations = true;
  if (v >= 8 && v <= 10) req.include_cluster_authorized_operations = true;
  auto resp = check_cell<bp::MetadataResponse>(req, v);
  expect(resp.topics.size() == req.topics->size(), "Metadata: topic count differs from the request");
  expect(resp.topics[0].error_code == 0, "Metadata: existing topic error " + std::to_string(resp.topics[0].error_code));
  expect(resp.topics[0].partitions.size() == kPartitions, "Metadata: partition count");
  if (v >= 10) {
    expect(resp.topics[0].topic_id == g_topic_id, "Metadata: topic id");
    expect(resp.topics[1].error_code == 0 && resp.topics[1].name == kTopic,
           "Metadata: topic by id not resolved (error " + std::to_string(resp.topics[1].error_code) + ")");
  }
  // All topics (null list) too: includes the internal offsets topic.
  bp::MetadataRequest all;
  if (v >= 1) all.topics = std::nullopt;
  if (v >= 4) all.allow_auto_topic_creation = false;
  check_cell<bp::MetadataResponse>(all, v);
}

void cell_offset_commit(int16_t v) {
  std::string group = vname("matrix-oc", v);
  bp::OffsetCommitRequest req;
  req.group_id = group;
  if (v >= 1) {
    auto [member, gen] = join_group(group);
    req.member_id = member;
    req.generation_id_or_member_epoch = gen;
  }
  if (v >= 2 && v <= 4) req.retention_time_ms = -1;
  bp::OffsetCommitRequest::OffsetCommitRequestTopic t;
  if (v >= 10) t.topic_id = g_topic_id;  // KIP-848: topics by id
  else t.name = kTopic;
  for (int32_t p : {0, 99}) {
    bp::OffsetCommitRequest::OffsetCommitRequestPartition cp;
    cp.partition_index = p;
    cp.committed_offset = 3;
    if (v >= 6) cp.committed_leader_epoch = 0;
    cp.committed_metadata = "meta";
    t.partitions.push_back(cp);
  }
  req.topics.push_back(t);
  bp::OffsetCommitRequest::OffsetCommitRequestTopic unknown = t;
  if (v >= 10) unknown.topic_id = kUnknownTopicId;
  else unknown.name = "matrix-no-such-topic";
  unknown.partitions.resize(1);
  req.topics.push_back(unknown);
  auto resp = check_cell<bp::OffsetCommitResponse>(req, v);
  expect(resp.topics.size() == 2 && resp.topics[0].partitions.size() == 2, "OffsetCommit: 2 partitions expected");
  expect(resp.topics[0].partitions[0].error_code == 0,
         "OffsetCommit: error " + std::to_string(resp.topics[0].partitions[0].error_code));
  expect(resp.topics[1].partitions.at(0).error_code == (v >= 10 ? 100 : 3),
         "OffsetCommit: unknown topic answered " + std::to_string(resp.topics[1].partitions.at(0).error_code));
  if (v >= 10) expect(resp.topics[0].topic_id == g_topic_id, "OffsetCommit: topic id not echoed");
}

void cell_offset_fetch(int16_t v) {
  std::string group = vname("matrix-of", v);
  commit_offset(group, 2);
  bp::OffsetFetchRequest req;
  if (v <= 7) {
    req.group_id = group;
    bp::OffsetFetchRequest::OffsetFetchRequestTopic t;
    t.name = kTopic;
    t.partition_indexes = {0, 1, 99};
    req.topics->push_back(t);
  } else {
    bp::OffsetFetchRequest::OffsetFetchRequestGroup g;
    g.group_id = group;
    bp::OffsetFetchRequest::OffsetFetchRequestTopics t;
    if (v >= 10) t.topic_id = g_topic_id;  // KIP-848: topics by id
    else t.name = kTopic;
    t.partition_indexes = {0, 1, 99};
    g.topics->push_back(t);
    if (v >= 10) {
      bp::OffsetFetchRequest::OffsetFetchRequestTopics unknown;
      unknown.topic_id = kUnknownTopicId;
      unknown.partition_indexes = {0};
      g.topics->push_back(unknown);
    }
    req.groups.push_back(g);
    bp::OffsetFetchRequest::OffsetFetchRequestGroup all;  // every committed topic
    all.group_id = group;
    all.topics = std::nullopt;
    req.groups.push_back(all);
  }
  if (v >= 7) req.require_stable = true;
  auto resp = check_cell<bp::OffsetFetchResponse>(req, v);
  if (v <= 7) {
    expect(resp.topics.size() == 1 && resp.topics[0].partitions.size() == 3, "OffsetFetch: 3 partitions expected");
    expect(resp.topics[0].partitions[0].committed_offset == 2, "OffsetFetch: committed offset");
  } else {
    expect(resp.groups.size() == 2, "OffsetFetch: 2 groups expected");
    const auto& named = resp.groups[0].topics;
    expect(named.size() == (v >= 10 ? 2u : 1u) && named[0].partitions.size() == 3, "OffsetFetch: 3 partitions expected");
    expect(named[0].partitions[0].committed_offset == 2, "OffsetFetch: committed offset");
    if (v >= 10) {
      expect(named[0].topic_id == g_topic_id, "OffsetFetch: topic id");
      expect(named[1].topic_id == kUnknownTopicId && named[1].partitions.at(0).error_code == 100,
             "OffsetFetch: unknown topic id not refused with UNKNOWN_TOPIC_ID");
      expect(!resp.groups[1].topics.empty() && resp.groups[1].topics[0].topic_id == g_topic_id,
             "OffsetFetch: whole-group listing lacks topic ids");
    }
  }
  if (v >= 2) {  // all topics of the group (null topics)
    bp::OffsetFetchRequest all;
    if (v <= 7) {
      all.group_id = group;
      all.topics = std::nullopt;
    } else {
      bp::OffsetFetchRequest::OffsetFetchRequestGroup g;
      g.group_id = group;
      g.topics = std::nullopt;
      all.groups.push_back(g);
    }
    check_cell<bp::OffsetFetchResponse>(all, v);
  }
}

void cell_find_coordinator(int16_t v) {
  bp::FindCoordinatorRequest req;
  if (v <= 3) {
    req.key = "matrix-fc";
  } else {
    req.coordinator_keys = {"matrix-fc", "matrix-fc2"};
  }
  check_cell<bp::FindCoordinatorResponse>(req, v);
  if (v >= 1) {  // a transaction coordinator is not served: an error answer, still valid
    bp::FindCoordinatorRequest txn = req;
    txn.key_type = 1;
    check_cell<bp::FindCoordinatorResponse>(txn, v);
  }
}

void cell_join_group(int16_t v) {
  std::string group = vname("matrix-jg", v);
  bp::JoinGroupRequest req;
  req.group_id = group;
  req.session_timeout_ms = 30000;
  if (v >= 1) req.rebalance_timeout_ms = 30000;
  req.protocol_type = "consumer";
  bp::JoinGroupRequest::JoinGroupRequestProtocol p;
  p.name = "range";
  p.metadata = Bytes(4, std::byte{1});
  req.protocols.push_back(p);
  if (v >= 5) req.group_instance_id = vname("matrix-instance", v);
  if (v >= 8) req.reason = "matrix";
  auto resp = check_cell<bp::JoinGroupResponse>(req, v);
  if (resp.error_code == 79) {
    req.member_id = resp.member_id;
    resp = check_cell<bp::JoinGroupResponse>(req, v);
  }
  expect(resp.error_code == 0, "JoinGroup: error " + std::to_string(resp.error_code));
  expect(resp.members.size() == 1, "JoinGroup: leader should see 1 member");
  if (v >= 5) {
    // Complete the generation, then rejoin as the same static member with no member id:
    // the static leader's rejoin (skip_assignment from v9).
    bp::SyncGroupRequest sync;
    sync.group_id = group;
    sync.generation_id = resp.generation_id;
    sync.member_id = resp.member_id;
    sync.group_instance_id = req.group_instance_id;
    auto sresp = exchange_new<bp::SyncGroupResponse>(sync, 3);
    expect(sresp.error_code == 0, "JoinGroup: SyncGroup error " + std::to_string(sresp.error_code));
    bp::JoinGroupRequest rejoin = req;
    rejoin.member_id.clear();
    auto r3 = check_cell<bp::JoinGroupResponse>(rejoin, v);
    expect(r3.error_code == 0, "JoinGroup: static rejoin error " + std::to_string(r3.error_code));
    req.member_id = r3.member_id;
  }
  // A second member without an id: MEMBER_ID_REQUIRED (v4+) or a join that waits; only
  // the first kind is bounded, so only for v4+ and without a static instance id.
  if (v >= 4) {
    bp::JoinGroupRequest second = req;
    second.member_id.clear();
    second.group_instance_id = std::nullopt;
    auto r2 = check_cell<bp::JoinGroupResponse>(second, v);
    expect(r2.error_code == 79, "JoinGroup: second member expected MEMBER_ID_REQUIRED, got " +
                                    std::to_string(r2.error_code));
  }
}

void cell_heartbeat(int16_t v) {
  std::string group = vname("matrix-hb", v);
  auto [member, gen] = join_group(group);
  bp::HeartbeatRequest req;
  req.group_id = group;
  req.generation_id = gen;
  req.member_id = member;
  auto resp = check_cell<bp::HeartbeatResponse>(req, v);
  expect(resp.error_code == 0, "Heartbeat: error " + std::to_string(resp.error_code));
  bp::HeartbeatRequest bad = req;
  bad.member_id = "no-such-member";
  auto r2 = check_cell<bp::HeartbeatResponse>(bad, v);
  expect(r2.error_code != 0, "Heartbeat: unknown member accepted");
}

void cell_leave_group(int16_t v) {
  std::string group = vname("matrix-lg", v);
  auto [member, gen] = join_group(group);
  bp::LeaveGroupRequest req;
  req.group_id = group;
  if (v <= 2) {
    req.member_id = member;
  } else {
    bp::LeaveGroupRequest::MemberIdentity m, unknown;
    m.member_id = member;
    unknown.member_id = "no-such-member";
    if (v >= 5) m.reason = "matrix";
    req.members = {m, unknown};
  }
  auto resp = check_cell<bp::LeaveGroupResponse>(req, v);
  if (v >= 3) expect(resp.members.size() == 2, "LeaveGroup: 2 members expected");
}

void cell_sync_group(int16_t v) {
  std::string group = vname("matrix-sg", v);
  auto [member, gen] = join_group(group);
  bp::SyncGroupRequest req;
  req.group_id = group;
  req.generation_id = gen;
  req.member_id = member;
  if (v >= 5) {
    req.protocol_type = "consumer";
    req.protocol_name = "range";
  }
  bp::SyncGroupRequest::SyncGroupRequestAssignment a;
  a.member_id = member;
  a.assignment = Bytes(3, std::byte{7});
  req.assignments.push_back(a);
  auto resp = check_cell<bp::SyncGroupResponse>(req, v);
  expect(resp.error_code == 0, "SyncGroup: error " + std::to_string(resp.error_code));
  bp::SyncGroupRequest bad = req;
  bad.generation_id = gen + 5;
  check_cell<bp::SyncGroupResponse>(bad, v);
}

void cell_describe_groups(int16_t v) {
  std::string group = vname("matrix-dg", v);
  join_group(group);
  bp::DescribeGroupsRequest req;
  req.groups = {group, "matrix-no-such-group"};
  if (v >= 3) req.include_authorized_operations = true;
  auto resp = check_cell<bp::DescribeGroupsResponse>(req, v);
  expect(resp.groups.size() == 2, "DescribeGroups: 2 groups expected");
  expect(resp.groups[0].members.size() == 1, "DescribeGroups: 1 member expected");
  // KIP-1043: from v6 an unknown group is an error, before it a Dead group.
  if (v >= 6) expect(resp.groups[1].error_code == 69, "DescribeGroups: GROUP_ID_NOT_FOUND expected");
  else expect(resp.groups[1].error_code == 0 && resp.groups[1].group_state == "Dead", "DescribeGroups: Dead expected");
}

void cell_list_groups(int16_t v) {
  bp::ListGroupsRequest req;
  check_cell<bp::ListGroupsResponse>(req, v);
  if (v >= 4) {
    bp::ListGroupsRequest f;
    f.states_filter = {"Stable", "Empty"};
    if (v >= 5) f.types_filter = {"classic"};
    check_cell<bp::ListGroupsResponse>(f, v);
  }
}

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

void cell_delete_records(int16_t v) {
  bp::DeleteRecordsRequest req;
  req.timeout_ms = 10000;
  bp::DeleteRecordsRequest::DeleteRecordsTopic t;
  t.name = kTopic;
  bp::DeleteRecordsRequest::DeleteRecordsPartition p2, missing, beyond;
  p2.partition_index = 2;
  p2.offset = 1;
  beyond.partition_index = 1;
  beyond.offset = 1'000'000;  // OFFSET_OUT_OF_RANGE
  missing.partition_index = 99;
  t.partitions = {p2, beyond, missing};
  req.topics.push_back(t);
  auto resp = check_cell<bp::DeleteRecordsResponse>(req, v);
  expect(resp.topics.size() == 1 && resp.topics[0].partitions.size() == 3, "DeleteRecords: 3 partitions expected");
}

void cell_init_producer_id(int16_t v) {
  bp::InitProducerIdRequest req;
  req.transactional_id = std::nullopt;
  req.transaction_timeout_ms = 60000;
  auto resp = check_cell<bp::InitProducerIdResponse>(req, v);
  expect(resp.error_code == 0, "InitProducerId: error " + std::to_string(resp.error_code));
  if (v >= 3) {  // bump the epoch of that producer, then a fenced (older) epoch
    bp::InitProducerIdRequest bump = req;
    bump.producer_id = resp.producer_id;
    bump.producer_epoch = resp.producer_epoch;
    auto r2 = check_cell<bp::InitProducerIdResponse>(bump, v);
    expect(r2.error_code == 0, "InitProducerId: bump error " + std::to_string(r2.error_code));
    auto r3 = check_cell<bp::InitProducerIdResponse>(bump, v);
    (void)r3;  // a retry of the bump, or fenced: any valid answer
  }
  bp::InitProducerIdRequest txn = req;  // refused: no transaction coordinator
  txn.transactional_id = "matrix-txn";
  check_cell<bp::InitProducerIdResponse>(txn, v);
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

void cell_delete_groups(int16_t v) {
  std::string empty = vname("matrix-dlg", v), live = vname("matrix-dlgl", v);
  commit_offset(empty, 1);
  join_group(live);
  bp::DeleteGroupsRequest req;
  req.groups_names = {empty, live, "matrix-no-such-group"};
  auto resp = check_cell<bp::DeleteGroupsResponse>(req, v);
  expect(resp.results.size() == 3, "DeleteGroups: 3 results expected");
  expect(resp.results[0].error_code == 0, "DeleteGroups: error " + std::to_string(resp.results[0].error_code));
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

void cell_offset_delete(int16_t v) {
  std::string group = vname("matrix-od", v);
  commit_offset(group, 1);
  bp::OffsetDeleteRequest req;
  req.group_id = group;
  bp::OffsetDeleteRequest::OffsetDeleteRequestTopic t;
  t.name = kTopic;
  bp::OffsetDeleteRequest::OffsetDeleteRequestPartition p0, p99;
  p0.partition_index = 0;
  p99.partition_index = 99;
  t.partitions = {p0, p99};
  req.topics.push_back(t);
  auto resp = check_cell<bp::OffsetDeleteResponse>(req, v);
  expect(resp.error_code == 0, "OffsetDelete: error " + std::to_string(resp.error_code));
  bp::OffsetDeleteRequest missing = req;
  missing.group_id = "matrix-no-such-group";
  check_cell<bp::OffsetDeleteResponse>(missing, v);
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

// One AlterClientQuotas entry: a quota of one user.
bp::AlterClientQuotasRequest::EntryData user_quota(const std::string& user, const std::string& key, double value) {
  bp::AlterClientQuotasRequest::EntryData entry;
  auto& e = entry.entity.emplace_back();
  e.entity_type = "user";
  e.entity_name = user;
  auto& op = entry.ops.emplace_back();
  op.key = key;
  op.value = value;
  return entry;
}

void cell_alter_client_quotas(int16_t v) {
  bp::AlterClientQuotasRequest req;
  auto ok = user_quota(vname("matrix-user", v), "producer_byte_rate", 1048576);
  auto bad_key = ok, ip = ok;
  bad_key.entity[0].entity_name = vname("matrix-other", v);
  bad_key.ops[0].key = "no_such_quota";
  ip.entity[0].entity_type = "ip";
  ip.entity[0].entity_name = "127.0.0.1";
  ip.ops[0].key = "connection_creation_rate";
  req.entries = {ok, bad_key, ip};
  auto resp = check_cell<bp::AlterClientQuotasResponse>(req, v);
  expect(resp.entries.size() == 3 && resp.entries[0].error_code == 0 && resp.entries[1].error_code == 42 &&
             resp.entries[2].error_code == 42,
         "AlterClientQuotas: expected NONE, INVALID_REQUEST, INVALID_REQUEST");
}

void cell_describe_client_quotas(int16_t v) {
  // A quota of this cell's own to find.
  bp::AlterClientQuotasRequest set;
  set.entries.push_back(user_quota(vname("matrix-dcq", v), "consumer_byte_rate", 2048));
  auto sresp = exchange_new<bp::AlterClientQuotasResponse>(set, 0);
  expect(sresp.entries.size() == 1 && sresp.entries[0].error_code == 0, "DescribeClientQuotas setup failed");
  bp::DescribeClientQuotasRequest req;
  auto& c = req.components.emplace_back();
  c.entity_type = "user";
  c.match_type = 0;
  c.match = vname("matrix-dcq", v);
  req.strict = true;
  bool found = false;
  for (int attempt = 0; attempt < 50 && !found; ++attempt) {  // the image catches up with the commit
    auto resp = check_cell<bp::DescribeClientQuotasResponse>(req, v);
    expect(resp.error_code == 0, "DescribeClientQuotas: error " + std::to_string(resp.error_code));
    found = resp.entries && resp.entries->size() == 1 && resp.entries->at(0).values.size() == 1 &&
            resp.entries->at(0).values[0].value == 2048;
  }
  expect(found, "DescribeClientQuotas: the quota set is not listed");
  bp::DescribeClientQuotasRequest dup = req;  // a type twice: INVALID_REQUEST
  dup.components.push_back(dup.components[0]);
  auto r2 = check_cell<bp::DescribeClientQuotasResponse>(dup, v);
  expect(r2.error_code == 42, "DescribeClientQuotas: a duplicate component is not refused");
}

void cell_describe_producers(int16_t v) {
  bp::DescribeProducersRequest req;
  bp::DescribeProducersRequest::TopicRequest t, missing;
  t.name = kTopic;
  t.partition_indexes = {0, 1, 99};
  missing.name = "matrix-no-such-topic";
  missing.partition_indexes = {0};
  req.topics = {t, missing};
  auto resp = check_cell<bp::DescribeProducersResponse>(req, v);
  expect(resp.topics.size() == 2, "DescribeProducers: 2 topics expected");
  const auto& p0 = resp.topics[0].partitions.at(0);
  expect(p0.error_code == 0 && p0.active_producers.size() == 1,
         "DescribeProducers: partition 0 should list 1 producer");
}

void cell_describe_topic_partitions(int16_t v) {
  // Every topic: the matrix topic with all its partitions led.
  bp::DescribeTopicPartitionsRequest all;
  auto resp = check_cell<bp::DescribeTopicPartitionsResponse>(all, v);
  bool found = false;
  for (const auto& t : resp.topics) {
    if (t.name != kTopic) continue;
    found = t.error_code == 0 && t.partitions.size() == static_cast<size_t>(kPartitions) && t.topic_id == g_topic_id;
    for (const auto& p : t.partitions) found = found && p.leader_id >= 0 && !p.replica_nodes.empty();
  }
  expect(found, "DescribeTopicPartitions: the matrix topic is not described whole");
  // Named topics (one unknown), one partition per response: the cursor walks them in name
  // order, every partition once.
  bp::DescribeTopicPartitionsRequest some;
  for (const char* name : {"matrix-no-such-topic", "matrix-compacted", "matrix"}) some.topics.emplace_back().name = name;
  some.response_partition_limit = 1;
  std::vector<std::string> seen;
  int unknown = 0;
  for (int round = 0; round < 10; ++round) {
    auto r = check_cell<bp::DescribeTopicPartitionsResponse>(some, v);
    for (const auto& t : r.topics) {
      if (t.error_code == 3) ++unknown;
      for (const auto& p : t.partitions) seen.push_back(t.name.value_or("") + "-" + std::to_string(p.partition_index));
    }
    if (!r.next_cursor) break;
    bp::DescribeTopicPartitionsRequest::Cursor c;
    c.topic_name = r.next_cursor->topic_name;
    c.partition_index = r.next_cursor->partition_index;
    some.cursor = c;
  }
  const std::vector<std::string> want = {"matrix-0", "matrix-1", "matrix-2", "matrix-compacted-0"};
  expect(seen == want, "DescribeTopicPartitions: the cursor walked " + std::to_string(seen.size()) + " partitions");
  expect(unknown == 1, "DescribeTopicPartitions: the unknown topic should be answered once");
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

void cell_offset_for_leader_epoch(int16_t v) {
  bp::OffsetForLeaderEpochRequest req;
  req.replica_id = -1;  // a consumer's question (KIP-320)
  auto& t = req.topics.emplace_back();
  t.topic = kTopic;
  auto& p0 = t.partitions.emplace_back();
  p0.partition = 0;
  p0.leader_epoch = 0;
  auto& missing = t.partitions.emplace_back();
  missing.partition = 99;
  auto resp = check_cell<bp::OffsetForLeaderEpochResponse>(req, v);
  expect(resp.topics.size() == 1 && resp.topics[0].partitions.size() == 2, "OffsetForLeaderEpoch: 2 partitions expected");
  const auto& a = resp.topics[0].partitions[0];
  expect(a.error_code == 0 && a.leader_epoch == 0 && a.end_offset > 0,
         "OffsetForLeaderEpoch: epoch 0 of partition 0 should end at its log end, got error " +
             std::to_string(a.error_code) + " end " + std::to_string(a.end_offset));
  expect(resp.topics[0].partitions[1].error_code != 0, "OffsetForLeaderEpoch: partition 99 should fail");
}

// brokerd's own APIs (proto/brokerd): mirror links, against a source that is not there.
void cell_create_mirror_links(int16_t v) {
  bp::CreateMirrorLinksRequest req;
  auto& l = req.links.emplace_back();
  l.name = "matrix-link";
  l.source_bootstrap_servers = "127.0.0.1:1";
  l.topics = {"matrix-mirrored"};
  req.validate_only = true;
  auto& bad = req.links.emplace_back();
  bad.name = "matrix-link-without-topics";
  bad.source_bootstrap_servers = "127.0.0.1:1";
  auto resp = check_cell<bp::CreateMirrorLinksResponse>(req, v);
  expect(resp.results.size() == 2, "CreateMirrorLinks: 2 results expected");
  expect(resp.results[0].error_code == 0, "CreateMirrorLinks: a valid link refused");
  expect(resp.results[1].error_code == 42, "CreateMirrorLinks: a link without topics should be INVALID_REQUEST");
}

void cell_alter_mirror_links(int16_t v) {
  bp::CreateMirrorLinksRequest create;
  auto& l = create.links.emplace_back();
  l.name = "matrix-alter-" + std::to_string(v);
  l.source_bootstrap_servers = "127.0.0.1:1";
  l.topics = {"matrix-mirrored"};
  expect(exchange_new<bp::CreateMirrorLinksResponse>(create, 0).results.at(0).error_code == 0,
         "AlterMirrorLinks: the link to alter was not created");
  bp::AlterMirrorLinksRequest req;
  auto alter = [&req](const std::string& name, int8_t op) {
    auto& a = req.links.emplace_back();
    a.name = name;
    a.operation = op;
  };
  for (int8_t op : {0, 1, 2}) alter(l.name, op);
  alter("matrix-no-such-link", 0);
  auto resp = check_cell<bp::AlterMirrorLinksResponse>(req, v);
  expect(resp.results.size() == 4, "AlterMirrorLinks: 4 results expected");
  for (size_t i = 0; i < 3; ++i)
    expect(resp.results[i].error_code == 0, "AlterMirrorLinks: operation " + std::to_string(i) + " refused");
  expect(resp.results[3].error_code == 91, "AlterMirrorLinks: an unknown link should be RESOURCE_NOT_FOUND");
}

void cell_describe_mirror_links(int16_t v) {
  bp::DescribeMirrorLinksRequest req;
  req.names = std::vector<std::string>{"matrix-no-such-link"};
  auto resp = check_cell<bp::DescribeMirrorLinksResponse>(req, v);
  expect(resp.links.size() == 1 && resp.links[0].error_code == 91,
         "DescribeMirrorLinks: an unknown link should be RESOURCE_NOT_FOUND");
  bp::DescribeMirrorLinksRequest all;
  all.names = std::nullopt;
  expect(check_cell<bp::DescribeMirrorLinksResponse>(all, v).error_code == 0, "DescribeMirrorLinks: listing failed");
}

void cell_promote_mirror_topics(int16_t v) {
  bp::PromoteMirrorTopicsRequest req;
  req.link_name = "matrix-no-such-link";
  req.topics = std::nullopt;
  auto resp = check_cell<bp::PromoteMirrorTopicsResponse>(req, v);
  expect(resp.error_code == 91, "PromoteMirrorTopics: an unknown link should be RESOURCE_NOT_FOUND");
}

void cell_alter_tenant_limits(int16_t v) {
  bp::AlterTenantLimitsRequest req;
  auto& ok = req.entries.emplace_back();
  ok.principal = "User:" + vname("matrix-tenant", v);
  auto& op = ok.ops.emplace_back();
  op.key = "max.topics";
  op.value = 1000;
  auto bad = ok;
  bad.principal = "User:" + vname("matrix-other-tenant", v);
  bad.ops[0].key = "max.bytes";
  req.entries.push_back(bad);
  auto resp = check_cell<bp::AlterTenantLimitsResponse>(req, v);
  expect(resp.entries.size() == 2 && resp.entries[0].error_code == 0 && resp.entries[1].error_code == 42,
         "AlterTenantLimits: expected NONE, INVALID_REQUEST");
}

void cell_describe_tenant_limits(int16_t v) {
  bp::AlterTenantLimitsRequest set;
  auto& e = set.entries.emplace_back();
  e.principal = "User:" + vname("matrix-described-tenant", v);
  e.pattern_type = 4;
  auto& op = e.ops.emplace_back();
  op.key = "max.partitions";
  op.value = 50;
  auto sresp = exchange_new<bp::AlterTenantLimitsResponse>(set, 0);
  expect(sresp.entries.size() == 1 && sresp.entries[0].error_code == 0, "DescribeTenantLimits setup failed");
  bp::DescribeTenantLimitsRequest req;
  req.principal = e.principal + "-web";
  auto resp = check_cell<bp::DescribeTenantLimitsResponse>(req, v);
  expect(resp.error_code == 0 && resp.limits.size() == 1 && resp.limits[0].principal == e.principal &&
             resp.limits[0].pattern_type == 4 && resp.limits[0].values.size() == 1 &&
             resp.limits[0].values[0].value == 50,
         "DescribeTenantLimits: the prefixed limit that applies is not listed");
}

// SASL on the matrix's PLAINTEXT listener: refused as Kafka refuses it, the connection kept
// (the exchanges themselves are tested with real clients, test_sasl.py).
void cell_sasl_handshake(int16_t v) {
  bp::SaslHandshakeRequest req;
  req.mechanism = "PLAIN";
  auto resp = check_cell<bp::SaslHandshakeResponse>(req, v);
  expect(resp.error_code == 34, "SaslHandshake on a PLAINTEXT listener should be ILLEGAL_SASL_STATE");
}

void cell_sasl_authenticate(int16_t v) {
  bp::SaslAuthenticateRequest req;
  const std::string token("\0u\0p", 4);
  for (char ch : token) req.auth_bytes.push_back(static_cast<std::byte>(ch));
  auto resp = check_cell<bp::SaslAuthenticateResponse>(req, v);
  expect(resp.error_code == 34, "SaslAuthenticate on a PLAINTEXT listener should be ILLEGAL_SASL_STATE");
}

void cell_alter_user_scram_credentials(int16_t v) {
  bp::AlterUserScramCredentialsRequest req;
  auto& u = req.upsertions.emplace_back();
  u.name = "matrix-user";
  u.mechanism = 1;
  u.iterations = 4096;
  u.salt = Bytes(16, std::byte{7});
  u.salted_password = Bytes(32, std::byte{9});
  auto& few = req.upsertions.emplace_back();
  few.name = "matrix-few-iterations";
  few.mechanism = 2;
  few.iterations = 100;
  few.salt = Bytes(16, std::byte{7});
  few.salted_password = Bytes(64, std::byte{9});
  auto& gone = req.deletions.emplace_back();
  gone.name = "matrix-no-such-user";
  gone.mechanism = 1;
  auto resp = check_cell<bp::AlterUserScramCredentialsResponse>(req, v);
  expect(resp.results.size() == 3, "AlterUserScramCredentials: 3 results expected");
  for (const auto& r : resp.results) {
    const int16_t want = r.user == "matrix-user" ? 0 : r.user == "matrix-few-iterations" ? 93 : 91;
    expect(r.error_code == want, "AlterUserScramCredentials: " + r.user + " got error " + std::to_string(r.error_code) +
                                     ", expected " + std::to_string(want));
  }
}

void cell_describe_user_scram_credentials(int16_t v) {
  bp::DescribeUserScramCredentialsRequest req;
  req.users = std::vector<bp::DescribeUserScramCredentialsRequest::UserName>(1);
  (*req.users)[0].name = "matrix-no-such-user";
  auto resp = check_cell<bp::DescribeUserScramCredentialsResponse>(req, v);
  expect(resp.results.size() == 1 && resp.results[0].error_code == 91,
         "DescribeUserScramCredentials: an unknown user should be RESOURCE_NOT_FOUND");
  bp::DescribeUserScramCredentialsRequest all;
  all.users = std::nullopt;
  expect(check_cell<bp::DescribeUserScramCredentialsResponse>(all, v).error_code == 0,
         "DescribeUserScramCredentials: listing failed");
}

// ACLs: made, listed and removed (the matrix's broker authorizes nothing, so they change
// nothing it does).
bp::CreateAclsRequest::AclCreation matrix_acl(const std::string& topic) {
  bp::CreateAclsRequest::AclCreation c;
  c.resource_type = 2;  // TOPIC
  c.resource_name = topic;
  c.resource_pattern_type = 3;  // LITERAL
  c.principal = "User:matrix";
  c.host = "*";
  c.operation = 3;  // READ
  c.permission_type = 3;  // ALLOW
  return c;
}

void cell_create_acls(int16_t v) {
  bp::CreateAclsRequest req;
  req.creations.push_back(matrix_acl("matrix-acl-" + std::to_string(v)));
  auto bad = matrix_acl("matrix-acl-bad");
  bad.principal = "no-colon";
  req.creations.push_back(bad);
  auto resp = check_cell<bp::CreateAclsResponse>(req, v);
  expect(resp.results.size() == 2, "CreateAcls: 2 results expected");
  expect(resp.results[0].error_code == 0, "CreateAcls: a valid binding refused");
  expect(resp.results[1].error_code == 42, "CreateAcls: a principal without a type should be INVALID_REQUEST");
}

void cell_describe_acls(int16_t v) {
  bp::CreateAclsRequest create;
  create.creations.push_back(matrix_acl("matrix-acl-described"));
  expect(exchange_new<bp::CreateAclsResponse>(create, 1).results.at(0).error_code == 0,
         "DescribeAcls: the binding to describe was not created");
  bp::DescribeAclsRequest req;
  req.resource_type_filter = 2;
  req.resource_name_filter = "matrix-acl-described";
  req.pattern_type_filter = 1;  // ANY
  req.principal_filter = std::nullopt;
  req.host_filter = std::nullopt;
  req.operation = 1;
  req.permission_type = 1;
  auto resp = check_cell<bp::DescribeAclsResponse>(req, v);
  expect(resp.error_code == 0 && resp.resources.size() == 1 && resp.resources[0].acls.size() == 1,
         "DescribeAcls: the binding was not found");
}

void cell_delete_acls(int16_t v) {
  const std::string topic = "matrix-acl-deleted-" + std::to_string(v);
  bp::CreateAclsRequest create;
  create.creations.push_back(matrix_acl(topic));
  expect(exchange_new<bp::CreateAclsResponse>(create, 1).results.at(0).error_code == 0,
         "DeleteAcls: the binding to delete was not created");
  bp::DeleteAclsRequest req;
  auto& f = req.filters.emplace_back();
  f.resource_type_filter = 2;
  f.resource_name_filter = topic;
  f.pattern_type_filter = 3;
  f.principal_filter = "User:matrix";
  f.host_filter = std::nullopt;
  f.operation = 1;
  f.permission_type = 1;
  auto resp = check_cell<bp::DeleteAclsResponse>(req, v);
  expect(resp.filter_results.size() == 1 && resp.filter_results[0].error_code == 0 &&
             resp.filter_results[0].matching_acls.size() == 1,
         "DeleteAcls: the binding was not deleted");
}

const std::map<int16_t, Cell>& cells() {
  static const std::map<int16_t, Cell> m = {
      {0, cell_produce},          {1, cell_fetch},
      {2, cell_list_offsets},     {3, cell_metadata},
      {8, cell_offset_commit},    {9, cell_offset_fetch},
      {10, cell_find_coordinator}, {11, cell_join_group},
      {12, cell_heartbeat},       {13, cell_leave_group},
      {14, cell_sync_group},      {15, cell_describe_groups},
      {16, cell_list_groups},     {18, cell_api_versions},
      {19, cell_create_topics},   {20, cell_delete_topics},
      {21, cell_delete_records},  {22, cell_init_producer_id},
      {23, cell_offset_for_leader_epoch},
      {32, cell_describe_configs}, {33, cell_alter_configs},
      {35, cell_describe_log_dirs},
      {34, cell_alter_replica_log_dirs},
      {48, cell_describe_client_quotas},
      {49, cell_alter_client_quotas},
      {37, cell_create_partitions}, {42, cell_delete_groups},
      {43, cell_elect_leaders}, {45, cell_alter_partition_reassignments}, {46, cell_list_partition_reassignments},
      {44, cell_incremental_alter_configs}, {47, cell_offset_delete},
      {55, cell_describe_quorum},
      {60, cell_describe_cluster}, {61, cell_describe_producers},
      {74, cell_list_config_resources}, {75, cell_describe_topic_partitions},
      {17, cell_sasl_handshake}, {36, cell_sasl_authenticate},
      {29, cell_describe_acls}, {30, cell_create_acls}, {31, cell_delete_acls},
      {50, cell_describe_user_scram_credentials}, {51, cell_alter_user_scram_credentials},
      {30000, cell_create_mirror_links}, {30001, cell_alter_mirror_links},
      {30002, cell_describe_mirror_links}, {30003, cell_promote_mirror_topics},
      {30004, cell_alter_tenant_limits}, {30005, cell_describe_tenant_limits},
  };
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s HOST PORT\n", argv[0]);
    return 2;
  }
  g_host = argv[1];
  g_port = std::atoi(argv[2]);
  std::vector<std::string> failures;
  int cells_run = 0, apis = 0;
  try {
    setup();
  } catch (const std::exception& e) {
    std::printf("FAIL setup: %s\n", e.what());
    return 1;
  }
  // The served table, as ApiVersions advertises it (it answers from served_apis.cc).
  bp::ApiVersionsRequest avreq;
  avreq.client_software_name = "api-matrix";
  avreq.client_software_version = "1.0";
  auto advertised = exchange_new<bp::ApiVersionsResponse>(avreq, 3).api_keys;
  for (const auto& api : advertised) {
    ++apis;
    auto it = cells().find(api.api_key);
    if (it == cells().end()) {
      failures.push_back(std::string("api ") + std::to_string(api.api_key) + " (" + api_name(api.api_key) +
                         "): advertised but the matrix has no request for it");
      continue;
    }
    for (int16_t v = api.min_version; v <= api.max_version; ++v) {
      ++cells_run;
      try {
        it->second(v);
        std::printf("ok   %s v%d\n", api_name(api.api_key), v);
      } catch (const std::exception& e) {
        std::string line = std::string(api_name(api.api_key)) + " v" + std::to_string(v) + ": " + e.what();
        std::printf("FAIL %s\n", line.c_str());
        failures.push_back(line);
      }
      std::fflush(stdout);
    }
  }
  std::printf("matrix: %d APIs, %d (API, version) cells, %zu failures\n", apis, cells_run, failures.size());
  for (const auto& f : failures) std::printf("  %s\n", f.c_str());
  return failures.empty() ? 0 : 1;
}
