// The matrix cells of the transaction APIs: AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
// WriteTxnMarkers, TxnOffsetCommit, DescribeTransactions, ListTransactions. Each cell starts
// its own transactional id (InitProducerId, retried while the coordinator loads) so that the
// versions do not share a transaction.
#include <chrono>
#include <thread>

#include "api_matrix.h"
#include "brokerd/protocol/messages/add_offsets_to_txn_request.h"
#include "brokerd/protocol/messages/add_offsets_to_txn_response.h"
#include "brokerd/protocol/messages/add_partitions_to_txn_request.h"
#include "brokerd/protocol/messages/add_partitions_to_txn_response.h"
#include "brokerd/protocol/messages/describe_transactions_request.h"
#include "brokerd/protocol/messages/describe_transactions_response.h"
#include "brokerd/protocol/messages/end_txn_request.h"
#include "brokerd/protocol/messages/end_txn_response.h"
#include "brokerd/protocol/messages/find_coordinator_request.h"
#include "brokerd/protocol/messages/find_coordinator_response.h"
#include "brokerd/protocol/messages/init_producer_id_request.h"
#include "brokerd/protocol/messages/init_producer_id_response.h"
#include "brokerd/protocol/messages/list_transactions_request.h"
#include "brokerd/protocol/messages/list_transactions_response.h"
#include "brokerd/protocol/messages/txn_offset_commit_request.h"
#include "brokerd/protocol/messages/txn_offset_commit_response.h"
#include "brokerd/protocol/messages/write_txn_markers_request.h"
#include "brokerd/protocol/messages/write_txn_markers_response.h"

namespace api_matrix {
namespace {

struct Txn {
  std::string id;
  int64_t producer_id = -1;
  int16_t epoch = -1;
};

// A transactional producer of its own, once the coordinator answers (it creates
// __transaction_state on the first FindCoordinator and loads its partitions).
Txn start_txn(const std::string& id) {
  Conn c(g_host, g_port);
  bp::FindCoordinatorRequest fc;
  fc.key_type = 1;
  fc.key = id;
  exchange<bp::FindCoordinatorResponse>(c, fc, 3);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    bp::InitProducerIdRequest req;
    req.transactional_id = id;
    req.transaction_timeout_ms = 60000;
    auto resp = exchange<bp::InitProducerIdResponse>(c, req, 4);
    if (resp.error_code == 0) return {id, resp.producer_id, resp.producer_epoch};
    if (std::chrono::steady_clock::now() > deadline)
      throw Failure("InitProducerId for " + id + ": error " + std::to_string(resp.error_code));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void add_partition(const Txn& t) {
  Conn c(g_host, g_port);
  bp::AddPartitionsToTxnRequest req;
  req.v3_and_below_transactional_id = t.id;
  req.v3_and_below_producer_id = t.producer_id;
  req.v3_and_below_producer_epoch = t.epoch;
  bp::AddPartitionsToTxnRequest::AddPartitionsToTxnTopic topic;
  topic.name = kTopic;
  topic.partitions = {0};
  req.v3_and_below_topics = {topic};
  auto resp = exchange<bp::AddPartitionsToTxnResponse>(c, req, 3);
  const auto& r = resp.results_by_topic_v3_and_below.at(0).results_by_partition.at(0);
  if (r.partition_error_code != 0) throw Failure("AddPartitionsToTxn setup: error " + std::to_string(r.partition_error_code));
}

}  // namespace

void cell_add_partitions_to_txn(int16_t v) {
  Txn t = start_txn(vname("matrix-apt", v));
  bp::AddPartitionsToTxnRequest req;
  bp::AddPartitionsToTxnRequest::AddPartitionsToTxnTopic topic, missing;
  topic.name = kTopic;
  topic.partitions = {0, 1};
  missing.name = "matrix-no-such-topic";
  missing.partitions = {0};
  if (v <= 3) {
    req.v3_and_below_transactional_id = t.id;
    req.v3_and_below_producer_id = t.producer_id;
    req.v3_and_below_producer_epoch = t.epoch;
    req.v3_and_below_topics = {topic};
    auto resp = check_cell<bp::AddPartitionsToTxnResponse>(req, v);
    expect(resp.results_by_topic_v3_and_below.size() == 1 &&
               resp.results_by_topic_v3_and_below[0].results_by_partition.size() == 2 &&
               resp.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code == 0,
           "AddPartitionsToTxn: 2 partitions added expected");
    // An unknown topic refuses the whole request: the others are not attempted.
    req.v3_and_below_topics = {topic, missing};
    auto refused = check_cell<bp::AddPartitionsToTxnResponse>(req, v);
    expect(refused.results_by_topic_v3_and_below.size() == 2, "AddPartitionsToTxn: 2 topics expected");
  } else {
    // v4+: brokers, batched; verify_only asks whether the partitions are in the transaction.
    add_partition(t);
    bp::AddPartitionsToTxnRequest::AddPartitionsToTxnTransaction txn;
    txn.transactional_id = t.id;
    txn.producer_id = t.producer_id;
    txn.producer_epoch = t.epoch;
    txn.verify_only = true;
    txn.topics = {topic};
    req.transactions = {txn};
    auto resp = check_cell<bp::AddPartitionsToTxnResponse>(req, v);
    expect(resp.error_code == 0 && resp.results_by_transaction.size() == 1, "AddPartitionsToTxn: 1 transaction");
    const auto& parts = resp.results_by_transaction[0].topic_results.at(0).results_by_partition;
    expect(parts.size() == 2 && parts[0].partition_error_code == 0 && parts[1].partition_error_code != 0,
           "AddPartitionsToTxn verify: partition 0 in the transaction, 1 not");
  }
}

void cell_add_offsets_to_txn(int16_t v) {
  Txn t = start_txn(vname("matrix-aot", v));
  bp::AddOffsetsToTxnRequest req;
  req.transactional_id = t.id;
  req.producer_id = t.producer_id;
  req.producer_epoch = t.epoch;
  req.group_id = vname("matrix-aot-group", v);
  auto resp = check_cell<bp::AddOffsetsToTxnResponse>(req, v);
  expect(resp.error_code == 0, "AddOffsetsToTxn: error " + std::to_string(resp.error_code));
}

void cell_end_txn(int16_t v) {
  Txn t = start_txn(vname("matrix-et", v));
  add_partition(t);
  bp::EndTxnRequest req;
  req.transactional_id = t.id;
  req.producer_id = t.producer_id;
  req.producer_epoch = t.epoch;
  req.committed = true;
  auto resp = check_cell<bp::EndTxnResponse>(req, v);
  expect(resp.error_code == 0, "EndTxn: error " + std::to_string(resp.error_code));
  // v5 (transaction.version 2): the producer goes on with the next epoch.
  if (v >= 5) expect(resp.producer_id == t.producer_id && resp.producer_epoch == t.epoch + 1, "EndTxn v5: the next epoch");
}

void cell_write_txn_markers(int16_t v) {
  // A marker for a producer the partition has not seen: written, and it changes nothing.
  bp::WriteTxnMarkersRequest req;
  bp::WriteTxnMarkersRequest::WritableTxnMarker m;
  m.producer_id = 900000 + v;
  m.producer_epoch = 0;
  m.transaction_result = false;
  m.coordinator_epoch = 0;
  bp::WriteTxnMarkersRequest::WritableTxnMarkerTopic topic;
  topic.name = kTopic;
  topic.partition_indexes = {0, 99};
  m.topics = {topic};
  req.markers = {m};
  auto resp = check_cell<bp::WriteTxnMarkersResponse>(req, v);
  expect(resp.markers.size() == 1 && resp.markers[0].topics.at(0).partitions.size() == 2,
         "WriteTxnMarkers: 2 partitions expected");
  expect(resp.markers[0].topics[0].partitions[0].error_code == 0, "WriteTxnMarkers: partition 0 written");
}

void cell_txn_offset_commit(int16_t v) {
  Txn t = start_txn(vname("matrix-toc", v));
  const std::string group = vname("matrix-toc-group", v);
  {
    Conn c(g_host, g_port);
    bp::AddOffsetsToTxnRequest add;
    add.transactional_id = t.id;
    add.producer_id = t.producer_id;
    add.producer_epoch = t.epoch;
    add.group_id = group;
    exchange<bp::AddOffsetsToTxnResponse>(c, add, 3);
  }
  bp::TxnOffsetCommitRequest req;
  req.transactional_id = t.id;
  req.group_id = group;
  req.producer_id = t.producer_id;
  req.producer_epoch = t.epoch;
  bp::TxnOffsetCommitRequest::TxnOffsetCommitRequestTopic topic;
  topic.name = kTopic;
  bp::TxnOffsetCommitRequest::TxnOffsetCommitRequestPartition p;
  p.partition_index = 0;
  p.committed_offset = 1;
  topic.partitions = {p};
  req.topics = {topic};
  auto resp = check_cell<bp::TxnOffsetCommitResponse>(req, v);
  expect(resp.topics.size() == 1 && resp.topics[0].partitions.at(0).error_code == 0,
         "TxnOffsetCommit: error " + std::to_string(resp.topics.at(0).partitions.at(0).error_code));
}

void cell_describe_transactions(int16_t v) {
  Txn t = start_txn(vname("matrix-dt", v));
  bp::DescribeTransactionsRequest req;
  req.transactional_ids = {t.id, "matrix-no-such-txn"};
  auto resp = check_cell<bp::DescribeTransactionsResponse>(req, v);
  expect(resp.transaction_states.size() == 2, "DescribeTransactions: 2 ids expected");
  expect(resp.transaction_states[0].error_code == 0 && resp.transaction_states[0].transaction_state == "Empty",
         "DescribeTransactions: the new id is Empty");
  expect(resp.transaction_states[1].error_code != 0, "DescribeTransactions: an unknown id is an error");
}

void cell_list_transactions(int16_t v) {
  Txn t = start_txn(vname("matrix-lt", v));
  bp::ListTransactionsRequest req;
  req.state_filters = {"Empty", "NoSuchState"};
  if (v >= 1) req.duration_filter = -1;
  if (v >= 2) req.transactional_id_pattern = "matrix-lt.*";
  auto resp = check_cell<bp::ListTransactionsResponse>(req, v);
  expect(resp.error_code == 0, "ListTransactions: error " + std::to_string(resp.error_code));
  expect(resp.unknown_state_filters == std::vector<std::string>{"NoSuchState"},
         "ListTransactions: the unknown state is named");
  bool found = false;
  for (const auto& s : resp.transaction_states) found = found || s.transactional_id == t.id;
  expect(found, "ListTransactions: the new id is listed");
}

}  // namespace api_matrix
