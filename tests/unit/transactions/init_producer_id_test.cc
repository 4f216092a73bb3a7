// InitProducerId with a transactional id: Kafka's TransactionCoordinator behaviour.
#include <gtest/gtest.h>

#include "driver.h"

namespace brokerd::transactions {
namespace {

using testing::Driver;

TEST(InitProducerId, NewIdGetsAProducerIdAtEpochZero) {
  Driver c;
  auto a = c.init("tx");
  EXPECT_EQ(a.error, ErrorCode::none);
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1000, 0}));
  const auto& md = c.at("tx");
  EXPECT_EQ(md.state, TxnState::empty);
  EXPECT_EQ(md.timeout_ms, 60'000);
  EXPECT_FALSE(md.pending_state);
  ASSERT_EQ(c.log.size(), 1u);
  EXPECT_EQ(decode_txn_key(c.log[0].key), "tx");
}

TEST(InitProducerId, RefusesEmptyIdAndBadTimeouts) {
  Driver c;
  c.config.max_timeout_ms = 900'000;
  EXPECT_EQ(c.init("").error, ErrorCode::invalid_request);
  EXPECT_EQ(c.init("tx", 0).error, ErrorCode::invalid_transaction_timeout);
  EXPECT_EQ(c.init("tx", -5).error, ErrorCode::invalid_transaction_timeout);
  EXPECT_EQ(c.init("tx", 900'001).error, ErrorCode::invalid_transaction_timeout);
  EXPECT_EQ(c.init("tx", 900'000).error, ErrorCode::none);
  // Nothing was allocated for the refused requests.
  EXPECT_EQ(c.at("tx").producer_id, 1000);
}

TEST(InitProducerId, KnownIdBumpsTheEpochAndTakesTheNewTimeout) {
  Driver c;
  c.init("tx");
  auto a = c.init("tx", 30'000);
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1000, 1}));
  EXPECT_EQ(c.at("tx").timeout_ms, 30'000);
  EXPECT_EQ(c.at("tx").last_producer_epoch, kNoProducerEpoch);
}

TEST(InitProducerId, AllocationFailureIsTheAnswer) {
  Driver c;
  TxnMetadata* none = nullptr;
  auto d = init_producer_id(none, {"tx", 1000, std::nullopt}, c.now, c.config,
                            [] { return ProducerIdGrant{ErrorCode::coordinator_load_in_progress, kNoProducerId}; });
  EXPECT_EQ(d.error, ErrorCode::coordinator_load_in_progress);
  EXPECT_FALSE(d.writes());
  EXPECT_FALSE(d.created);
}

TEST(InitProducerId, PendingOrPreparedMeansConcurrentTransactions) {
  Driver c;
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 0}});
  c.end("tx", p, TxnResult::commit);  // PrepareCommit written, completion pending
  EXPECT_EQ(c.init("tx").error, ErrorCode::concurrent_transactions);
  TxnMetadata md = c.at("tx");
  md.pending_state.reset();  // prepared, markers not yet sent
  EXPECT_EQ(init_producer_id(&md, {"tx", 1000, std::nullopt}, c.now, c.config, c.allocator()).error,
            ErrorCode::concurrent_transactions);
}

TEST(InitProducerId, OngoingTransactionIsAbortedWithTheEpochFenced) {
  Driver c;
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 0}, {"t", 1}});
  auto a = c.init("tx");
  EXPECT_EQ(a.error, ErrorCode::concurrent_transactions);
  const auto& md = c.at("tx");
  EXPECT_EQ(md.state, TxnState::prepare_abort);
  EXPECT_EQ(md.producer_epoch, 1);  // bumped: the old producer is fenced
  EXPECT_EQ(md.last_producer_epoch, kNoProducerEpoch);
  ASSERT_EQ(c.markers.size(), 1u);
  EXPECT_EQ(c.markers[0].result, TxnResult::abort);
  EXPECT_EQ(c.markers[0].producer_epoch, 1);
  EXPECT_EQ(c.markers[0].partitions, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
  // Until the markers are written the client keeps retrying.
  EXPECT_EQ(c.init("tx").error, ErrorCode::concurrent_transactions);
  c.write_markers();
  EXPECT_EQ(c.at("tx").state, TxnState::complete_abort);
  EXPECT_EQ(c.init("tx").ids, (ProducerIdAndEpoch{1000, 2}));
}

TEST(InitProducerId, FailedFenceWriteDoesNotBumpTwice) {
  Driver c;
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 0}});
  c.fail_next_write = true;
  EXPECT_EQ(c.init("tx").error, ErrorCode::not_enough_replicas);
  EXPECT_TRUE(c.at("tx").failed_epoch_fence);
  // The write may have landed: the old epoch is fenced all the same.
  EXPECT_EQ(c.at("tx").state, TxnState::ongoing);
  EXPECT_EQ(c.at("tx").producer_epoch, 1);
  EXPECT_EQ(c.add("tx", p, {{"t", 1}}).error, ErrorCode::producer_fenced);
  EXPECT_EQ(c.init("tx").error, ErrorCode::concurrent_transactions);
  EXPECT_EQ(c.at("tx").producer_epoch, 1);  // one bump for the two fences
  c.write_markers();
  EXPECT_FALSE(c.at("tx").failed_epoch_fence);
}

TEST(InitProducerId, Kip360ResumptionWithTheCurrentEpoch) {
  Driver c;
  auto p = c.init("tx").ids;  // (1000, 0)
  auto a = c.init("tx", 60'000, p);
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1000, 1}));
  EXPECT_EQ(c.at("tx").last_producer_epoch, 0);
  // The answer was lost and the producer retries with the same expectation: same epoch again.
  auto retry = c.init("tx", 60'000, p);
  EXPECT_EQ(retry.ids, (ProducerIdAndEpoch{1000, 1}));
  // An epoch that is neither current nor last is a zombie.
  EXPECT_EQ(c.init("tx", 60'000, ProducerIdAndEpoch{1000, 7}).error, ErrorCode::producer_fenced);
  // Another producer id than the id's current or previous.
  EXPECT_EQ(c.init("tx", 60'000, ProducerIdAndEpoch{5, 1}).error, ErrorCode::producer_fenced);
}

TEST(InitProducerId, Kip360AfterANewProducerInitialisedIsFenced) {
  Driver c;
  auto old = c.init("tx").ids;
  c.init("tx");  // another producer takes the id: epoch 1, no last epoch
  EXPECT_EQ(c.init("tx", 60'000, old).error, ErrorCode::producer_fenced);
}

TEST(InitProducerId, Kip360ForABrandNewIdReturnsTheNewProducerId) {
  Driver c;
  // A producer recovering from UNKNOWN_PRODUCER_ID after the id expired.
  auto a = c.init("tx", 60'000, ProducerIdAndEpoch{77, 4});
  EXPECT_EQ(a.error, ErrorCode::none);
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1000, 0}));
}

TEST(InitProducerId, ExhaustedEpochRotatesToANewProducerId) {
  Driver c;
  c.init("tx");
  c.cache.at("tx").producer_epoch = kMaxProducerEpoch - 1;
  auto a = c.init("tx");
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1001, 0}));
  EXPECT_EQ(c.at("tx").previous_producer_id, 1000);
  EXPECT_EQ(c.at("tx").last_producer_epoch, kNoProducerEpoch);
}

TEST(InitProducerId, RetryOfARotationWithTheOldIdIsRecognised) {
  Driver c;
  c.init("tx");
  c.cache.at("tx").producer_epoch = kMaxProducerEpoch - 1;
  ProducerIdAndEpoch old{1000, kMaxProducerEpoch - 1};
  auto a = c.init("tx", 60'000, old);
  EXPECT_EQ(a.ids, (ProducerIdAndEpoch{1001, 0}));
  EXPECT_EQ(c.at("tx").last_producer_epoch, kMaxProducerEpoch - 1);
  // The answer was lost: the old id with its exhausted epoch is still let through, and the
  // epoch of the new id is bumped.
  auto retry = c.init("tx", 60'000, old);
  EXPECT_EQ(retry.error, ErrorCode::none);
  EXPECT_EQ(retry.ids.producer_id, 1001);
}

TEST(InitProducerId, FencedErrorForOldClients) {
  EXPECT_EQ(fenced_error_for(ErrorCode::producer_fenced, false), ErrorCode::invalid_producer_epoch);
  EXPECT_EQ(fenced_error_for(ErrorCode::producer_fenced, true), ErrorCode::producer_fenced);
  EXPECT_EQ(fenced_error_for(ErrorCode::concurrent_transactions, false), ErrorCode::concurrent_transactions);
}

}  // namespace
}  // namespace brokerd::transactions
