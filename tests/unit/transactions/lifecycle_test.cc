// Whole lives of transactional ids: a transaction from start to end, a zombie producer fenced,
// a transaction timed out, an idle id expired, and a coordinator failing over mid-commit.
#include <gtest/gtest.h>

#include "driver.h"

namespace brokerd::transactions {
namespace {

using testing::Driver;
using S = TxnState;

std::vector<std::pair<S, S>> steps(const Driver& c) {
  std::vector<std::pair<S, S>> out;
  for (const auto& t : c.applied) out.emplace_back(t.from, t.to);
  return out;
}

TEST(Lifecycle, TwoTransactionsOfOneProducer) {
  Driver c;
  c.config.txn_version = kTxnVersion1;  // flexible values keep every field the cache holds
  auto p = c.init("tx").ids;
  c.add("tx", p, {{"t", 0}});
  c.add("tx", p, {{"t", 1}});
  c.add_offsets_of("tx", p, 3);
  EXPECT_EQ(c.end("tx", p, TxnResult::commit).error, ErrorCode::none);
  c.write_markers();
  c.add("tx", p, {{"t", 0}});
  EXPECT_EQ(c.end("tx", p, TxnResult::abort).error, ErrorCode::none);
  c.write_markers();
  EXPECT_EQ(steps(c), (std::vector<std::pair<S, S>>{
                          {S::empty, S::empty},
                          {S::empty, S::ongoing},
                          {S::ongoing, S::ongoing},
                          {S::ongoing, S::ongoing},
                          {S::ongoing, S::prepare_commit},
                          {S::prepare_commit, S::complete_commit},
                          {S::complete_commit, S::ongoing},
                          {S::ongoing, S::prepare_abort},
                          {S::prepare_abort, S::complete_abort},
                      }));
  // Every transition is in the log, and the log replays to the cache.
  EXPECT_EQ(c.log.size(), c.applied.size());
  auto replayed = replay_txn_log(c.log);
  TxnValue expected = c.at("tx").value();
  expected.last_producer_epoch = kNoProducerEpoch;
  EXPECT_EQ(replayed.at("tx").value(), expected);
}

TEST(Lifecycle, ZombieProducerIsFenced) {
  Driver c;
  auto zombie = c.init("tx").ids;
  c.add("tx", zombie, {{"t", 0}});
  // A second instance with the same transactional id starts: the zombie's transaction is
  // aborted and its epoch fenced before the new instance gets an epoch.
  EXPECT_EQ(c.init("tx").error, ErrorCode::concurrent_transactions);
  c.write_markers();
  auto fresh = c.init("tx");
  EXPECT_EQ(fresh.error, ErrorCode::none);
  EXPECT_EQ(fresh.ids, (ProducerIdAndEpoch{1000, 2}));
  // Whatever the zombie tries now fails with its old epoch.
  EXPECT_EQ(c.add("tx", zombie, {{"t", 1}}).error, ErrorCode::producer_fenced);
  EXPECT_EQ(c.add_offsets_of("tx", zombie, 0).error, ErrorCode::producer_fenced);
  EXPECT_EQ(c.end("tx", zombie, TxnResult::commit).error, ErrorCode::producer_fenced);
  EXPECT_EQ(c.end("tx", zombie, TxnResult::commit, kTxnVersion2).error, ErrorCode::producer_fenced);
  EXPECT_EQ(c.init("tx", 60'000, zombie).error, ErrorCode::producer_fenced);
  AddPartitionsRequest verify{"tx", zombie.producer_id, zombie.epoch, {{"t", 0}}, kTxnVersion0};
  EXPECT_EQ(verify_partitions(c.find("tx"), verify).at(0).second, ErrorCode::producer_fenced);
  // The new instance works.
  EXPECT_EQ(c.add("tx", fresh.ids, {{"t", 1}}).error, ErrorCode::none);
}

TEST(Lifecycle, ZombieOfAVersion2ProducerIsFencedWhileTheAbortIsUnderWay) {
  Driver c;
  auto zombie = c.init("tx").ids;
  c.add("tx", zombie, {{"t", 0}}, kTxnVersion2);
  c.init("tx");  // fence: PrepareAbort at epoch 1
  // The zombie's end names epoch 0, one below the metadata's; it is not a retry of its own end.
  c.write_markers();
  EXPECT_EQ(c.end("tx", zombie, TxnResult::abort, kTxnVersion2).error, ErrorCode::producer_fenced);
}

TEST(Lifecycle, TimedOutTransactionIsAbortedWithTheEpochBumped) {
  Driver c;
  auto p = c.init("tx", 1'000).ids;
  c.add("tx", p, {{"t", 0}});
  c.now += 1'000;
  EXPECT_FALSE(timed_out(c.at("tx"), c.now));  // start + timeout < now, strictly
  EXPECT_TRUE(timed_out_transactions(c.cache, c.now).empty());
  c.now += 1;
  EXPECT_TRUE(timed_out(c.at("tx"), c.now));
  EXPECT_EQ(timed_out_transactions(c.cache, c.now), (std::vector<ProducerIdAndEpoch>{p}));
  c.abort_timed_out_transactions();
  EXPECT_EQ(c.at("tx").state, S::prepare_abort);
  EXPECT_EQ(c.at("tx").producer_epoch, 1);
  ASSERT_EQ(c.markers.size(), 1u);
  EXPECT_EQ(c.markers[0].result, TxnResult::abort);
  EXPECT_EQ(c.markers[0].producer_epoch, 1);
  // Not timed out twice while its abort is under way.
  EXPECT_FALSE(timed_out(c.at("tx"), c.now + 10'000));
  c.write_markers();
  EXPECT_EQ(c.at("tx").state, S::complete_abort);
  // The producer learns its transaction is gone.
  EXPECT_EQ(c.end("tx", p, TxnResult::commit).error, ErrorCode::producer_fenced);
  EXPECT_EQ(c.add("tx", p, {{"t", 0}}).error, ErrorCode::producer_fenced);
}

TEST(Lifecycle, TimeoutOfAnIdThatMovedOnIsSkipped) {
  Driver c;
  auto p = c.init("tx", 1'000).ids;
  c.add("tx", p, {{"t", 0}});
  c.now += 5'000;
  EXPECT_EQ(abort_timed_out(c.at("tx"), 999, c.now).error, ErrorCode::invalid_producer_id_mapping);
  TxnMetadata pending = c.at("tx");
  pending.pending_state = S::prepare_commit;
  EXPECT_EQ(abort_timed_out(pending, 1000, c.now).error, ErrorCode::concurrent_transactions);
}

TEST(Lifecycle, IdleIdsExpireWithATombstone) {
  Driver c;
  c.config.transactional_id_expiration_ms = 10'000;
  auto p = c.init("idle").ids;
  auto q = c.init("busy").ids;
  c.add("busy", q, {{"t", 0}});
  (void)p;
  c.now += 9'999;
  EXPECT_FALSE(should_expire(c.at("idle"), c.now, c.config));
  c.now += 1;
  EXPECT_TRUE(should_expire(c.at("idle"), c.now, c.config));
  // An ongoing transaction never expires, however old.
  EXPECT_FALSE(should_expire(c.at("busy"), c.now + 1'000'000, c.config));
  c.expire_ids();
  EXPECT_FALSE(c.find("idle"));
  EXPECT_TRUE(c.find("busy"));
  ASSERT_FALSE(c.log.empty());
  EXPECT_EQ(decode_txn_key(c.log.back().key), "idle");
  EXPECT_FALSE(c.log.back().value);
  EXPECT_EQ(c.applied.back().to, S::dead);
  // Loading the log does not bring it back; a new InitProducerId starts afresh.
  EXPECT_FALSE(replay_txn_log(c.log).contains("idle"));
  EXPECT_EQ(c.init("idle").ids.epoch, 0);
}

TEST(Lifecycle, FailoverResendsTheMarkersOfAPreparedCommit) {
  Driver old;
  auto p = old.init("tx").ids;
  old.add("tx", p, {{"t", 0}, {"t", 1}});
  old.end("tx", p, TxnResult::commit);
  auto q = old.init("other").ids;
  old.add("other", q, {{"u", 0}});  // ongoing: nothing to resume
  // The old coordinator stops before the markers are written.
  Driver next = old.failover();
  ASSERT_EQ(next.markers.size(), 1u);
  const MarkerPlan& m = next.markers[0];
  EXPECT_EQ(m.transactional_id, "tx");
  EXPECT_EQ(m.result, TxnResult::commit);
  EXPECT_EQ((ProducerIdAndEpoch{m.producer_id, m.producer_epoch}), p);
  EXPECT_EQ(m.partitions, (std::vector<TopicPartition>{{"t", 0}, {"t", 1}}));
  EXPECT_EQ(next.at("tx").pending_state, S::complete_commit);
  EXPECT_EQ(next.at("other").state, S::ongoing);
  // Meanwhile the client's retry waits, then is answered once the markers are written.
  EXPECT_EQ(next.end("tx", p, TxnResult::commit).error, ErrorCode::concurrent_transactions);
  next.write_markers();
  EXPECT_EQ(next.at("tx").state, S::complete_commit);
  EXPECT_EQ(next.end("tx", p, TxnResult::commit).error, ErrorCode::none);
}

TEST(Lifecycle, FailoverOfAVersion2AbortKeepsTheBumpedEpoch) {
  Driver old;
  old.config.txn_version = kTxnVersion2;  // flexible log values: the client version is kept
  auto p = old.init("tx").ids;
  old.add("tx", p, {{"t", 0}}, kTxnVersion2);
  old.end("tx", p, TxnResult::abort, kTxnVersion2);
  Driver next = old.failover();
  ASSERT_EQ(next.markers.size(), 1u);
  EXPECT_EQ(next.markers[0].result, TxnResult::abort);
  EXPECT_EQ(next.markers[0].producer_epoch, 1);
  EXPECT_EQ(next.markers[0].reply, (ProducerIdAndEpoch{1000, 1}));
  next.write_markers();
  EXPECT_EQ(next.at("tx").state, S::complete_abort);
  // The retry of the end, at the new coordinator, is recognised as version 2's retry.
  auto retry = next.end("tx", p, TxnResult::abort, kTxnVersion2);
  EXPECT_EQ(retry.error, ErrorCode::none);
  EXPECT_EQ(retry.ids, (ProducerIdAndEpoch{1000, 1}));
}

TEST(Lifecycle, ReplaySkipsUnknownKeyVersions) {
  Driver c;
  c.init("tx");
  Bytes foreign{std::byte{0}, std::byte{5}, std::byte{0}, std::byte{0}};
  c.log.insert(c.log.begin(), TxnLogRecord{foreign, Bytes{std::byte{1}}});
  auto loaded = replay_txn_log(c.log);
  EXPECT_EQ(loaded.size(), 1u);
  EXPECT_TRUE(resume_after_load(loaded, c.now).empty());
}

}  // namespace
}  // namespace brokerd::transactions
