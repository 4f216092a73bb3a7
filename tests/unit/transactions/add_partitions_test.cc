// AddPartitionsToTxn, AddOffsetsToTxn and the verify-only check (KIP-890 part 1).
#include <gtest/gtest.h>

#include "driver.h"

namespace brokerd::transactions {
namespace {

using testing::Driver;

TEST(AddPartitions, FirstPartitionStartsTheTransaction) {
  Driver c;
  auto p = c.init("tx").ids;
  c.now += 10;
  auto a = c.add("tx", p, {{"t", 1}, {"u", 0}});
  EXPECT_EQ(a.error, ErrorCode::none);
  const auto& md = c.at("tx");
  EXPECT_EQ(md.state, TxnState::ongoing);
  EXPECT_EQ(md.txn_start_ms, c.now);
  EXPECT_EQ(md.partitions, (std::set<TopicPartition>{{"t", 1}, {"u", 0}}));

  c.now += 10;
  c.add("tx", p, {{"v", 3}});
  EXPECT_EQ(c.at("tx").txn_start_ms, c.now - 10);  // the start stays
  EXPECT_EQ(c.at("tx").partitions.size(), 3u);
  EXPECT_EQ(c.at("tx").last_update_ms, c.now);
}

TEST(AddPartitions, KnownPartitionsAnswerWithoutAWrite) {
  Driver c;
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 1}});
  size_t written = c.log.size();
  EXPECT_EQ(c.add("tx", p, {{"t", 1}}).error, ErrorCode::none);
  EXPECT_EQ(c.log.size(), written);
}

TEST(AddPartitions, KafkasErrors) {
  Driver c;
  EXPECT_EQ(c.add("tx", {1000, 0}, {{"t", 0}}).error, ErrorCode::invalid_producer_id_mapping);  // unknown id
  auto p = c.init("tx").ids;
  EXPECT_EQ(c.add("", p, {{"t", 0}}).error, ErrorCode::invalid_request);
  EXPECT_EQ(c.add("tx", {999, 0}, {{"t", 0}}).error, ErrorCode::invalid_producer_id_mapping);
  EXPECT_EQ(c.add("tx", {1000, 1}, {{"t", 0}}).error, ErrorCode::producer_fenced);
  c.add("tx", p, {{"t", 0}});
  c.end("tx", p, TxnResult::commit);  // pending completion
  EXPECT_EQ(c.add("tx", p, {{"t", 1}}).error, ErrorCode::concurrent_transactions);
  TxnMetadata prepared = c.at("tx");
  prepared.pending_state.reset();
  EXPECT_EQ(add_partitions(&prepared, {"tx", 1000, 0, {{"t", 1}}}, c.now).error, ErrorCode::concurrent_transactions);
}

TEST(AddPartitions, AfterACompletedTransactionANewOneStarts) {
  Driver c;
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 0}});
  c.end("tx", p, TxnResult::commit);
  c.write_markers();
  c.now += 100;
  EXPECT_EQ(c.add("tx", p, {{"u", 0}}).error, ErrorCode::none);
  EXPECT_EQ(c.at("tx").partitions, (std::set<TopicPartition>{{"u", 0}}));
  EXPECT_EQ(c.at("tx").txn_start_ms, c.now);
}

TEST(AddOffsets, AddsTheGroupsOffsetsPartition) {
  Driver c;
  auto p = c.init("tx").ids;
  EXPECT_EQ(c.add_offsets_of("tx", p, 17).error, ErrorCode::none);
  EXPECT_TRUE(c.at("tx").partitions.contains(TopicPartition{"__consumer_offsets", 17}));
  EXPECT_EQ(c.add_offsets_of("tx", {1000, 3}, 17).error, ErrorCode::producer_fenced);
}

TEST(VerifyPartitions, EachPartitionInOrOutOfTheTransaction) {
  Driver c;
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 0}});
  AddPartitionsRequest req{"tx", p.producer_id, p.epoch, {{"t", 0}, {"t", 1}}, kTxnVersion0};
  size_t written = c.log.size();
  auto r = verify_partitions(c.find("tx"), req);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].second, ErrorCode::none);
  EXPECT_EQ(r[1].second, ErrorCode::transaction_abortable);
  EXPECT_EQ(c.log.size(), written);  // a check, never a write
}

TEST(VerifyPartitions, WholeRequestErrors) {
  Driver c;
  AddPartitionsRequest req{"tx", 1000, 0, {{"t", 0}, {"t", 1}}, kTxnVersion0};
  for (auto& [tp, e] : verify_partitions(nullptr, req)) EXPECT_EQ(e, ErrorCode::invalid_producer_id_mapping);
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 0}});
  req.producer_epoch = 5;
  for (auto& [tp, e] : verify_partitions(c.find("tx"), req)) EXPECT_EQ(e, ErrorCode::producer_fenced);
  req.producer_epoch = 0;
  req.producer_id = 1;
  for (auto& [tp, e] : verify_partitions(c.find("tx"), req)) EXPECT_EQ(e, ErrorCode::invalid_producer_id_mapping);
  req.producer_id = 1000;
  c.end("tx", p, TxnResult::abort);
  for (auto& [tp, e] : verify_partitions(c.find("tx"), req)) EXPECT_EQ(e, ErrorCode::concurrent_transactions);
  req.transactional_id = "";
  for (auto& [tp, e] : verify_partitions(c.find("tx"), req)) EXPECT_EQ(e, ErrorCode::invalid_request);
}

}  // namespace
}  // namespace brokerd::transactions
