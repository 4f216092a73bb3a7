// The api_matrix cells of the APIs that write and read a partition's data or describe its
// topic: Produce, Fetch, ListOffsets, Metadata, DeleteRecords, InitProducerId,
// DescribeProducers, DescribeTopicPartitions, OffsetForLeaderEpoch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api_matrix.h"

namespace api_matrix {

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
  bp::InitProducerIdRequest txn = req;  // a transactional id: the coordinator answers (or is loading)
  txn.transactional_id = "matrix-txn";
  check_cell<bp::InitProducerIdResponse>(txn, v);
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

}  // namespace api_matrix
