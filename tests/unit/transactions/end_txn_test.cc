// EndTxn: commit and abort, retries of an end already prepared or complete, and transaction
// version 2's epoch bump at every end.
#include <gtest/gtest.h>

#include "driver.h"

namespace brokerd::transactions {
namespace {

using testing::Driver;

ProducerIdAndEpoch open_txn(Driver& c, const std::string& id, int16_t version = kTxnVersion0) {
  auto p = c.init(id).ids;
  c.add(id, p, {{"t", 0}, {"u", 2}}, version);
  return p;
}

TEST(EndTxn, CommitPreparesSendsMarkersThenCompletes) {
  Driver c;
  auto p = open_txn(c, "tx");
  auto a = c.end("tx", p, TxnResult::commit);
  EXPECT_EQ(a.error, ErrorCode::none);
  EXPECT_EQ(a.ids, p);  // version 0: the epoch stays
  EXPECT_EQ(c.at("tx").state, TxnState::prepare_commit);
  EXPECT_EQ(c.at("tx").pending_state, TxnState::complete_commit);
  ASSERT_EQ(c.markers.size(), 1u);
  const MarkerPlan& m = c.markers[0];
  EXPECT_EQ(m.result, TxnResult::commit);
  EXPECT_EQ((ProducerIdAndEpoch{m.producer_id, m.producer_epoch}), p);
  EXPECT_EQ(m.partitions, (std::vector<TopicPartition>{{"t", 0}, {"u", 2}}));
  c.write_markers();
  const auto& md = c.at("tx");
  EXPECT_EQ(md.state, TxnState::complete_commit);
  EXPECT_TRUE(md.partitions.empty());
  EXPECT_FALSE(md.pending_state);
}

TEST(EndTxn, AbortGoesThroughPrepareAbort) {
  Driver c;
  auto p = open_txn(c, "tx");
  EXPECT_EQ(c.end("tx", p, TxnResult::abort).error, ErrorCode::none);
  EXPECT_EQ(c.at("tx").state, TxnState::prepare_abort);
  c.write_markers();
  EXPECT_EQ(c.at("tx").state, TxnState::complete_abort);
}

TEST(EndTxn, KafkasErrors) {
  Driver c;
  EXPECT_EQ(c.end("tx", {1000, 0}, TxnResult::commit).error, ErrorCode::invalid_producer_id_mapping);
  auto p = c.init("tx").ids;
  EXPECT_EQ(c.end("", p, TxnResult::commit).error, ErrorCode::invalid_request);
  // Nothing to end.
  EXPECT_EQ(c.end("tx", p, TxnResult::commit).error, ErrorCode::invalid_txn_state);
  c.add("tx", p, {{"t", 0}});
  EXPECT_EQ(c.end("tx", {1, 0}, TxnResult::commit).error, ErrorCode::invalid_producer_id_mapping);
  EXPECT_EQ(c.end("tx", {1000, 1}, TxnResult::commit).error, ErrorCode::producer_fenced);
  EXPECT_EQ(c.end("tx", {1000, -1}, TxnResult::commit).error, ErrorCode::producer_fenced);
}

TEST(EndTxn, RetriesWhilePreparedAndAfterCompletion) {
  Driver c;
  auto p = open_txn(c, "tx");
  c.end("tx", p, TxnResult::commit);
  // Markers on their way: the same end waits, the other is refused.
  EXPECT_EQ(c.end("tx", p, TxnResult::commit).error, ErrorCode::concurrent_transactions);
  TxnMetadata prepared = c.at("tx");
  prepared.pending_state.reset();
  EXPECT_EQ(end_txn(&prepared, {"tx", p.producer_id, p.epoch, TxnResult::commit, 0}, c.now, c.allocator()).error,
            ErrorCode::concurrent_transactions);
  EXPECT_EQ(end_txn(&prepared, {"tx", p.producer_id, p.epoch, TxnResult::abort, 0}, c.now, c.allocator()).error,
            ErrorCode::invalid_txn_state);
  c.write_markers();
  size_t written = c.log.size();
  auto again = c.end("tx", p, TxnResult::commit);
  EXPECT_EQ(again.error, ErrorCode::none);
  EXPECT_EQ(again.ids, p);
  EXPECT_EQ(c.log.size(), written);
  EXPECT_EQ(c.end("tx", p, TxnResult::abort).error, ErrorCode::invalid_txn_state);
}

TEST(EndTxnV2, EveryEndBumpsTheEpochAndReturnsIt) {
  Driver c;
  auto p = open_txn(c, "tx", kTxnVersion2);
  auto a = c.end("tx", p, TxnResult::commit, kTxnVersion2);
  EXPECT_EQ(a.error, ErrorCode::none);
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1000, 1}));
  EXPECT_EQ(c.at("tx").producer_epoch, 1);
  EXPECT_EQ(c.at("tx").last_producer_epoch, 0);
  // The markers carry the bumped epoch: late batches of epoch 0 are refused.
  EXPECT_EQ(c.markers.at(0).producer_epoch, 1);
  c.write_markers();
  EXPECT_EQ(c.at("tx").state, TxnState::complete_commit);
  EXPECT_EQ(c.at("tx").producer_epoch, 1);

  // The next transaction uses the new epoch.
  ProducerIdAndEpoch next{1000, 1};
  EXPECT_EQ(c.add("tx", next, {{"t", 0}}, kTxnVersion2).error, ErrorCode::none);
  EXPECT_EQ(c.end("tx", next, TxnResult::abort, kTxnVersion2).ids, (ProducerIdAndEpoch{1000, 2}));
}

TEST(EndTxnV2, RetryNamesTheEpochBeforeTheBump) {
  Driver c;
  auto p = open_txn(c, "tx", kTxnVersion2);
  c.end("tx", p, TxnResult::commit, kTxnVersion2);
  TxnMetadata prepared = c.at("tx");
  prepared.pending_state.reset();
  EXPECT_EQ(end_txn(&prepared, {"tx", 1000, 0, TxnResult::commit, 2}, c.now, c.allocator()).error,
            ErrorCode::concurrent_transactions);
  // The bumped epoch in a prepared state would be the next transaction's end: fenced.
  EXPECT_EQ(end_txn(&prepared, {"tx", 1000, 1, TxnResult::commit, 2}, c.now, c.allocator()).error,
            ErrorCode::producer_fenced);
  c.write_markers();
  auto retry = c.end("tx", p, TxnResult::commit, kTxnVersion2);
  EXPECT_EQ(retry.error, ErrorCode::none);
  EXPECT_EQ(retry.ids, (ProducerIdAndEpoch{1000, 1}));
  // With the current epoch and nothing open there is nothing to end.
  EXPECT_EQ(c.end("tx", {1000, 1}, TxnResult::commit, kTxnVersion2).error, ErrorCode::producer_fenced);
}

TEST(EndTxnV2, LastEpochMovesToTheNextProducerId) {
  Driver c;
  auto p = c.init("tx").ids;
  c.cache.at("tx").producer_epoch = kMaxProducerEpoch - 1;
  p.epoch = kMaxProducerEpoch - 1;
  c.add("tx", p, {{"t", 0}}, kTxnVersion2);
  auto a = c.end("tx", p, TxnResult::commit, kTxnVersion2);
  EXPECT_EQ(a.error, ErrorCode::none);
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1001, 0}));  // the id the producer goes on with
  EXPECT_EQ(c.at("tx").next_producer_id, 1001);
  EXPECT_EQ(c.markers.at(0).producer_id, 1000);
  EXPECT_EQ(c.markers.at(0).producer_epoch, kMaxProducerEpoch);
  c.write_markers();
  const auto& md = c.at("tx");
  EXPECT_EQ(md.producer_id, 1001);
  EXPECT_EQ(md.producer_epoch, 0);
  EXPECT_EQ(md.previous_producer_id, 1000);
  EXPECT_EQ(md.next_producer_id, kNoProducerId);
  // A retry with the old id and its last usable epoch is recognised.
  auto retry = c.end("tx", p, TxnResult::commit, kTxnVersion2);
  EXPECT_EQ(retry.error, ErrorCode::none);
  EXPECT_EQ(retry.ids, (ProducerIdAndEpoch{1001, 0}));
}

}  // namespace
}  // namespace brokerd::transactions
