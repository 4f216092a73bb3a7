// txn_v2: a transactional producer that speaks KIP-890 part 2 (transaction.version 2) over the
// raw protocol, as Kafka 4's Java client does and Debian's librdkafka does not:
//   - Produce v12 opens the transaction on a partition without AddPartitionsToTxn;
//   - a Produce v11 to a partition not in the transaction is refused (part 1's check);
//   - TxnOffsetCommit v5 sends a group's offsets without AddOffsetsToTxn;
//   - EndTxn v5 answers a new epoch, which the next transaction uses;
//   - the previous epoch is fenced for produce and EndTxn.
//
// Usage: txn_v2 HOST PORT TOPIC GROUP TRANSACTIONAL_ID (any node of the cluster: each request
// goes to the node that answers it, as a client sends it: produce to partition 0's leader,
// the transaction's requests to its coordinator, the group's to the group coordinator). The
// topic has at least 3 partitions.
// Prints what it did, one line per step, then "committed=<values> aborted=<values>" for the
// caller to check with a read_committed consumer; exit code 1 at the first step that fails.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "brokerd/protocol/messages/end_txn_request.h"
#include "brokerd/protocol/messages/end_txn_response.h"
#include "brokerd/protocol/messages/find_coordinator_request.h"
#include "brokerd/protocol/messages/find_coordinator_response.h"
#include "brokerd/protocol/messages/init_producer_id_request.h"
#include "brokerd/protocol/messages/init_producer_id_response.h"
#include "brokerd/protocol/messages/metadata_request.h"
#include "brokerd/protocol/messages/metadata_response.h"
#include "brokerd/protocol/messages/offset_fetch_request.h"
#include "brokerd/protocol/messages/offset_fetch_response.h"
#include "brokerd/protocol/messages/produce_request.h"
#include "brokerd/protocol/messages/produce_response.h"
#include "brokerd/protocol/messages/txn_offset_commit_request.h"
#include "brokerd/protocol/messages/txn_offset_commit_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/batch_builder.h"
#include "wire_client.h"

namespace bp = brokerd::protocol;
using brokerd::Bytes;
using namespace wire_client;

namespace {

std::string g_topic, g_group, g_txn_id;
std::map<int32_t, std::pair<std::string, int>> g_nodes;  // node id -> host, port
std::map<int32_t, std::unique_ptr<Conn>> g_conns;

Conn& node(int32_t id) {
  auto& c = g_conns[id];
  if (!c) {
    auto it = g_nodes.find(id);
    if (it == g_nodes.end()) throw Failure("no broker " + std::to_string(id) + " in the metadata");
    c = std::make_unique<Conn>(it->second.first, it->second.second);
  }
  return *c;
}

void step(const std::string& what) { std::printf("%s\n", what.c_str()); }

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  std::exit(1);
}

// Retried while the answer is one a client retries (the coordinator loading or busy).
bool retriable(int16_t e) { return e == 14 || e == 15 || e == 16 || e == 19 || e == 51; }

template <class Fn>
auto until_settled(const char* what, Fn fn) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto [error, result] = fn();
    if (!retriable(error) || std::chrono::steady_clock::now() > deadline) return std::make_pair(error, result);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    (void)what;
  }
}

bp::Records txn_batch(int64_t pid, int16_t epoch, int32_t seq, const std::vector<std::string>& values) {
  brokerd::storage::BatchOptions o;
  o.producer_id = pid;
  o.producer_epoch = epoch;
  o.base_sequence = seq;
  o.transactional = true;
  brokerd::storage::BatchBuilder b(o);
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  for (const auto& v : values) b.add(now, "k", v);
  Bytes bytes = b.build();
  return bp::Records::of(brokerd::SharedBytes::copy_of(bytes));
}

int16_t produce(Conn& c, int16_t version, int32_t partition, int64_t pid, int16_t epoch, int32_t seq,
                const std::vector<std::string>& values) {
  bp::ProduceRequest req;
  req.transactional_id = g_txn_id;
  req.acks = -1;
  req.timeout_ms = 10000;
  bp::ProduceRequest::TopicProduceData td;
  td.name = g_topic;
  bp::ProduceRequest::PartitionProduceData pd;
  pd.index = partition;
  pd.records = txn_batch(pid, epoch, seq, values);
  td.partition_data.push_back(pd);
  req.topic_data.push_back(td);
  auto resp = exchange<bp::ProduceResponse>(c, req, version);
  return resp.responses.at(0).partition_responses.at(0).error_code;
}

struct Ended {
  int16_t error = 0;
  int64_t producer_id = -1;
  int16_t epoch = -1;
};

Ended end_txn(Conn& c, int64_t pid, int16_t epoch, bool commit) {
  auto [error, ended] = until_settled("EndTxn", [&] {
    bp::EndTxnRequest req;
    req.transactional_id = g_txn_id;
    req.producer_id = pid;
    req.producer_epoch = epoch;
    req.committed = commit;
    auto resp = exchange<bp::EndTxnResponse>(c, req, 5);
    return std::make_pair(resp.error_code, Ended{resp.error_code, resp.producer_id, resp.producer_epoch});
  });
  ended.error = error;
  return ended;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: txn_v2 HOST PORT TOPIC GROUP TRANSACTIONAL_ID\n");
    return 2;
  }
  g_host = argv[1];
  g_port = std::atoi(argv[2]);
  g_topic = argv[3];
  g_group = argv[4];
  g_txn_id = argv[5];
  g_client_id = "txn-v2";
  try {
    Conn any(g_host, g_port);
    bp::MetadataRequest mreq;
    mreq.topics->emplace_back().name = g_topic;
    auto md = exchange<bp::MetadataResponse>(any, mreq, 9);
    for (const auto& b : md.brokers) g_nodes[b.node_id] = {b.host, b.port};
    int32_t leader = -1;
    for (const auto& p : md.topics.at(0).partitions)
      if (p.partition_index == 0) leader = p.leader_id;
    auto find = [&](int8_t type, const std::string& key) {
      auto [error, id] = until_settled("FindCoordinator", [&] {
        bp::FindCoordinatorRequest req;
        req.key_type = type;
        req.key = key;
        auto resp = exchange<bp::FindCoordinatorResponse>(any, req, 3);
        return std::make_pair(resp.error_code, resp.node_id);
      });
      if (error != 0) fail("FindCoordinator " + key + ": error " + std::to_string(error));
      return id;
    };
    const int32_t coordinator = find(1, g_txn_id);
    const int32_t group_coordinator = find(0, g_group);
    step("partition 0 led by " + std::to_string(leader) + ", transaction coordinator " + std::to_string(coordinator) +
         ", group coordinator " + std::to_string(group_coordinator));
    Conn& c = node(coordinator);
    Conn& lead = node(leader);
    Conn& groups = node(group_coordinator);
    auto [init_error, producer] = until_settled("InitProducerId", [&] {
      bp::InitProducerIdRequest req;
      req.transactional_id = g_txn_id;
      req.transaction_timeout_ms = 60000;
      auto resp = exchange<bp::InitProducerIdResponse>(c, req, 5);
      return std::make_pair(resp.error_code, std::make_pair(resp.producer_id, resp.producer_epoch));
    });
    if (init_error != 0) fail("InitProducerId: error " + std::to_string(init_error));
    const auto [pid, epoch0] = producer;
    step("producer " + std::to_string(pid) + " epoch " + std::to_string(epoch0));

    // Transaction 1: Produce v12 adds partition 0 itself.
    const std::vector<std::string> committed{"v2-commit-0", "v2-commit-1"};
    auto [p1, unused1] = until_settled("Produce v12", [&] { return std::make_pair(produce(lead, 12, 0, pid, epoch0, 0, committed), 0); });
    if (p1 != 0) fail("Produce v12 into a new transaction: error " + std::to_string(p1));
    step("produce v12 to partition 0: added and written");
    int32_t leader1 = -1;
    for (const auto& p : md.topics.at(0).partitions)
      if (p.partition_index == 1) leader1 = p.leader_id;
    const int16_t refused = produce(node(leader1), 11, 1, pid, epoch0, 0, {"v2-refused"});
    if (refused != 120) fail("Produce v11 to a partition outside the transaction: error " + std::to_string(refused) + ", not 120");
    step("produce v11 to partition 1 (not in the transaction): TRANSACTION_ABORTABLE");
    auto [oc, unused2] = until_settled("TxnOffsetCommit v5", [&] {
      bp::TxnOffsetCommitRequest req;
      req.transactional_id = g_txn_id;
      req.group_id = g_group;
      req.producer_id = pid;
      req.producer_epoch = epoch0;
      bp::TxnOffsetCommitRequest::TxnOffsetCommitRequestTopic t;
      t.name = g_topic;
      bp::TxnOffsetCommitRequest::TxnOffsetCommitRequestPartition p;
      p.partition_index = 0;
      p.committed_offset = 42;
      t.partitions = {p};
      req.topics = {t};
      auto resp = exchange<bp::TxnOffsetCommitResponse>(groups, req, 5);
      return std::make_pair(resp.topics.at(0).partitions.at(0).error_code, 0);
    });
    if (oc != 0) fail("TxnOffsetCommit v5 without AddOffsetsToTxn: error " + std::to_string(oc));
    step("txn offset commit v5: the group's offsets partition added");
    Ended e1 = end_txn(c, pid, epoch0, true);
    if (e1.error != 0) fail("EndTxn v5 commit: error " + std::to_string(e1.error));
    if (e1.producer_id != pid || e1.epoch != epoch0 + 1)
      fail("EndTxn v5 answered producer " + std::to_string(e1.producer_id) + " epoch " + std::to_string(e1.epoch) +
           ", not the next epoch of " + std::to_string(pid));
    step("commit: next epoch " + std::to_string(e1.epoch));

    // Transaction 2, with the new epoch (sequences start again at 0), aborted.
    const std::vector<std::string> aborted{"v2-abort-0"};
    auto [p2, unused3] = until_settled("Produce v12", [&] { return std::make_pair(produce(lead, 12, 0, pid, e1.epoch, 0, aborted), 0); });
    if (p2 != 0) fail("Produce v12 with the new epoch: error " + std::to_string(p2));
    Ended e2 = end_txn(c, pid, e1.epoch, false);
    if (e2.error != 0 || e2.epoch != e1.epoch + 1) fail("EndTxn v5 abort: error " + std::to_string(e2.error) + " epoch " + std::to_string(e2.epoch));
    step("abort: next epoch " + std::to_string(e2.epoch));

    // The first transaction's epoch is fenced.
    int32_t leader2 = -1;
    for (const auto& p : md.topics.at(0).partitions)
      if (p.partition_index == 2) leader2 = p.leader_id;
    const int16_t zombie = produce(node(leader2), 12, 2, pid, epoch0, 0, {"v2-zombie"});
    if (zombie == 0) fail("Produce v12 with a fenced epoch was written");
    step("produce v12 with the first epoch: error " + std::to_string(zombie));
    Ended late = end_txn(c, pid, epoch0, true);
    if (late.error == 0) fail("EndTxn v5 with a fenced epoch succeeded");
    step("end txn with the first epoch: error " + std::to_string(late.error));

    // The offsets committed with transaction 1.
    bp::OffsetFetchRequest of;
    bp::OffsetFetchRequest::OffsetFetchRequestGroup g;
    g.group_id = g_group;
    bp::OffsetFetchRequest::OffsetFetchRequestTopics t;
    t.name = g_topic;
    t.partition_indexes = {0};
    g.topics->push_back(t);
    of.groups.push_back(g);
    of.require_stable = true;
    auto fetched = exchange<bp::OffsetFetchResponse>(groups, of, 8);
    const int64_t offset = fetched.groups.at(0).topics.at(0).partitions.at(0).committed_offset;
    if (offset != 42) fail("the group's committed offset is " + std::to_string(offset) + ", not 42");
    step("group offset 42 committed with the transaction");
    std::printf("committed=%s,%s aborted=%s\n", committed[0].c_str(), committed[1].c_str(), aborted[0].c_str());
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
