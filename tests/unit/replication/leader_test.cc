// The leader: admitting acks=all, the high watermark, ISR changes, answering followers.
#include <gtest/gtest.h>

#include "brokerd/replication/replica.h"
#include "memory_log.h"

namespace brokerd::replication {
namespace {

using testing::MemoryLog;
using testing::partition;

struct Leader : ::testing::Test {
  MemoryLog log;
  LeaderEpochCache epochs;
  ReplicaConfig config{.broker_id = 1, .min_insync_replicas = 2, .replica_lag_time_max_ms = 1000};
  std::unique_ptr<Replica> r;
  int64_t now = 1000;

  void start(PartitionState s) {
    r = std::make_unique<Replica>(config, log, epochs, 0);
    r->apply(s, now);
  }
  FetchDecision fetch(BrokerId from, Offset offset, Epoch epoch = 3, Offset log_start = 0,
                      int64_t broker_epoch = kNoBrokerEpoch) {
    return r->handle_fetch(FetchRequest{from, epoch, offset, log_start, broker_epoch}, now);
  }
  std::vector<Completion> completions() { return r->take_output().completions; }
  // Leader 1 of ISR {1, 2} at offset 10; follower 3 catches up and is proposed.
  AlterPartitionRequest propose_follower_3() {
    start(partition(1, 3, {1, 2}));
    log.write(3, 10);
    fetch(2, 10);
    fetch(3, 10);
    auto out = r->take_output().alter_partition;
    EXPECT_TRUE(out);
    return out.value_or(AlterPartitionRequest{});
  }
};

TEST_F(Leader, BecomingLeaderStartsItsEpochAtTheLogEnd) {
  log.write(1, 5);
  start(partition(1, 3, {1, 2, 3}));
  EXPECT_TRUE(r->is_leader());
  ASSERT_TRUE(epochs.latest());
  EXPECT_EQ(*epochs.latest(), (EpochEntry{3, 5}));
  EXPECT_TRUE(r->take_output().epoch_cache_changed);
}

TEST_F(Leader, AcksAllCompletesOnlyOnceEveryIsrMemberHasTheBatch) {
  start(partition(1, 3, {1, 2, 3}));
  const Offset last = log.write(3, 2);
  r->on_appended(7, last, -1, now + 500, now);
  EXPECT_TRUE(completions().empty());
  fetch(2, 2);
  EXPECT_TRUE(completions().empty()) << "follower 3 does not have it yet";
  EXPECT_EQ(r->high_watermark(), 0);
  fetch(3, 1);
  EXPECT_EQ(r->high_watermark(), 1);
  EXPECT_TRUE(completions().empty());
  fetch(3, 2);
  EXPECT_EQ(r->high_watermark(), 2);
  auto c = completions();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].id, 7u);
  EXPECT_EQ(c[0].error, ErrorCode::none);
}

TEST_F(Leader, AcksOneCompletesAtOnce) {
  start(partition(1, 3, {1, 2, 3}));
  r->on_appended(9, log.write(3), 1, now + 500, now);
  auto c = completions();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].error, ErrorCode::none);
}

TEST_F(Leader, RefusesAcksAllBelowMinIsrBeforeWriting) {
  start(partition(1, 3, {1}));
  EXPECT_EQ(r->check_append(-1), ErrorCode::not_enough_replicas);
  EXPECT_EQ(r->check_append(1), ErrorCode::none);
}

TEST_F(Leader, TheHighWatermarkWaitsWhileTheIsrIsBelowMinIsr) {
  start(partition(1, 3, {1}));
  log.write(3, 3);
  r->on_appended(1, 2, 1, now + 500, now);
  EXPECT_EQ(r->high_watermark(), 0);  // KIP-966: one replica is not enough to commit
}

TEST_F(Leader, ShrinkAfterTheAckIsAnsweredNotEnoughReplicasAfterAppend) {
  start(partition(1, 3, {1, 2, 3}));
  const Offset last = log.write(3);
  r->on_appended(4, last, -1, now + 5000, now);
  fetch(2, 1);
  // The controller takes 3 out, then 2: the batch is on 1 and 2 but the ISR is {1}.
  r->apply(partition(1, 3, {1}, {1, 2, 3}, 2), now);
  // Committed ISR below min: nothing more commits and the pending ack waits...
  EXPECT_TRUE(completions().empty());
  // ...until it times out.
  now += 5000;
  r->tick(now);
  auto c = completions();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].error, ErrorCode::request_timed_out);
}

TEST_F(Leader, LosingLeadershipFailsPendingAcksAFollowerMayHold) {
  start(partition(1, 3, {1, 2, 3}));
  r->on_appended(5, log.write(3), -1, now + 500, now);
  fetch(2, 0);  // answered with the batch
  r->apply(partition(2, 4, {2, 3}), now);
  auto c = completions();
  ASSERT_EQ(c.size(), 1u);
  // Written here, perhaps held by the next leader: "possibly written", never "not written".
  EXPECT_EQ(c[0].error, ErrorCode::not_enough_replicas_after_append);
  EXPECT_FALSE(r->is_leader());
  EXPECT_EQ(log.end_offset(), 1);
}

TEST_F(Leader, LosingLeadershipCutsWhatNoFollowerWasSent) {
  start(partition(1, 3, {1, 2, 3}));
  r->on_appended(5, log.write(3), -1, now + 500, now);
  fetch(2, 0);
  r->on_appended(6, log.write(3, 2), -1, now + 500, now);  // [1, 2]: no follower was sent it
  r->apply(partition(2, 4, {2, 3}), now);
  auto c = completions();
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].error, ErrorCode::not_enough_replicas_after_append);
  // "Not written", as Kafka answers, and true: the batch is cut, and nobody else has it.
  EXPECT_EQ(c[1].error, ErrorCode::not_leader_or_follower);
  EXPECT_EQ(log.end_offset(), 1);
  // An append that lands after the move is answered the same way.
  EXPECT_EQ(r->unconfirmed_answer(1), ErrorCode::not_leader_or_follower);
  EXPECT_EQ(r->unconfirmed_answer(0), ErrorCode::not_enough_replicas_after_append);
}

TEST_F(Leader, FetchesWithTheWrongEpochOrOffsetAreRefused) {
  log.write(1, 4);
  start(partition(1, 3, {1, 2, 3}));
  EXPECT_EQ(fetch(2, 0, 2).error, ErrorCode::fenced_leader_epoch);
  EXPECT_EQ(fetch(2, 0, 4).error, ErrorCode::unknown_leader_epoch);
  EXPECT_EQ(fetch(2, 5).error, ErrorCode::offset_out_of_range);
  EXPECT_EQ(fetch(9, 0).error, ErrorCode::not_leader_or_follower);
  EXPECT_EQ(fetch(2, 4).error, ErrorCode::none);
  EXPECT_EQ(fetch(2, 4, -1).error, ErrorCode::none) << "an unknown epoch is not checked";
}

TEST_F(Leader, ALaggingFollowerIsShrunkOutAfterTheLagTime) {
  start(partition(1, 3, {1, 2, 3}));
  log.write(3, 10);
  fetch(2, 10);
  fetch(3, 2);
  now += 1001;
  fetch(2, 10);
  r->tick(now);
  auto out = r->take_output();
  ASSERT_TRUE(out.alter_partition);
  EXPECT_EQ(out.alter_partition->new_isr, (std::vector<BrokerId>{1, 2}));
  EXPECT_EQ(out.alter_partition->leader_epoch, 3);
}

TEST_F(Leader, AFollowerRejoinsOnlyOnceItReachesTheHighWatermark) {
  start(partition(1, 3, {1, 2}));
  log.write(3, 10);
  fetch(2, 10);
  EXPECT_EQ(r->high_watermark(), 10);
  r->take_output();
  fetch(3, 4);
  EXPECT_FALSE(r->take_output().alter_partition) << "3 is behind the high watermark";
  fetch(3, 10);
  auto out = r->take_output();
  ASSERT_TRUE(out.alter_partition);
  EXPECT_EQ(out.alter_partition->new_isr, (std::vector<BrokerId>{1, 2, 3}));
  // While the change is pending, 3 already counts for the high watermark.
  EXPECT_EQ(r->maximal_isr().size(), 3u);
  log.write(3, 1);
  fetch(2, 11);
  EXPECT_EQ(r->high_watermark(), 10);
  fetch(3, 11);
  EXPECT_EQ(r->high_watermark(), 11);
}

TEST_F(Leader, ALeaderThatStoodStillDoesNotDropItsFollowers) {
  start(partition(1, 3, {1, 2, 3}));
  fetch(2, 0);
  fetch(3, 0);
  r->tick(now);
  now += 5 * config.replica_lag_time_max_ms;  // the leader was paused
  r->tick(now);
  EXPECT_FALSE(r->take_output().alter_partition);
  fetch(2, 0);
  for (int i = 0; i < 12; ++i) {  // ticks every 100 ms again; 2 fetches, 3 really is gone
    now += config.replica_lag_time_max_ms / 10;
    fetch(2, 0);
    r->tick(now);
  }
  auto out = r->take_output();
  ASSERT_TRUE(out.alter_partition);
  EXPECT_EQ(out.alter_partition->new_isr, (std::vector<BrokerId>{1, 2}));
}

TEST_F(Leader, ARefusedIsrChangeIsProposedAgainOnlyAfterTheRetryPeriod) {
  const auto sent = propose_follower_3();
  r->handle_alter_partition(sent, ErrorCode::ineligible_replica, partition(1, 3, {1, 2}), now);
  fetch(3, 10);
  EXPECT_FALSE(r->take_output().alter_partition) << "proposed again on the next fetch";
  now += config.alter_partition_retry_ms;
  fetch(3, 10);
  EXPECT_TRUE(r->take_output().alter_partition);
}

TEST_F(Leader, AnAnswerToAnEarlierProposalLeavesThePendingOneCounting) {
  const auto first = propose_follower_3();
  // Newer metadata overtakes the first proposal's answer, and follower 3 is proposed again.
  r->apply(partition(1, 3, {1, 2}, {1, 2, 3}, 1), now);
  fetch(3, 10);
  auto second = r->take_output().alter_partition;
  ASSERT_TRUE(second);
  ASSERT_EQ(second->partition_epoch, 1);
  r->handle_alter_partition(first, ErrorCode::invalid_update_version, partition(1, 3, {1, 2}, {1, 2, 3}, 1), now);
  // The controller may commit the second: follower 3 still holds back the high watermark.
  log.write(3, 5);
  fetch(2, 15);
  EXPECT_EQ(r->high_watermark(), 10);
  r->handle_alter_partition(*second, ErrorCode::none, partition(1, 3, {1, 2, 3}, {1, 2, 3}, 2), now);
  EXPECT_EQ(r->state().isr, (std::vector<BrokerId>{1, 2, 3}));
  fetch(3, 15);
  EXPECT_EQ(r->high_watermark(), 15);
}

TEST_F(Leader, AnIsrProposalNamesTheBrokerEpochsItsMembersFetchedWith) {
  start(partition(1, 3, {1, 2}));
  log.write(3, 10);
  fetch(2, 10, 3, 0, 21);
  fetch(3, 10, 3, 0, 34);
  auto out = r->take_output();
  ASSERT_TRUE(out.alter_partition);
  EXPECT_EQ(out.alter_partition->new_isr, (std::vector<BrokerId>{1, 2, 3}));
  EXPECT_EQ(out.alter_partition->broker_epochs, (std::vector<int64_t>{kNoBrokerEpoch, 21, 34}));
}

TEST_F(Leader, AProposalWhoseOutcomeIsOpenKeepsItsMembersCountingUntilNewerMetadata) {
  const auto sent = propose_follower_3();
  // The controller moved on (perhaps by this very change, committed from an earlier copy).
  r->handle_alter_partition(sent, ErrorCode::invalid_update_version, partition(1, 3, {1, 2}), now);
  log.write(3, 5);
  fetch(2, 15);
  EXPECT_EQ(r->high_watermark(), 10) << "follower 3 may be in the controller's ISR";
  r->handle_alter_partition(sent, ErrorCode::request_timed_out, partition(1, 3, {1, 2}), now);
  fetch(2, 15);
  EXPECT_EQ(r->high_watermark(), 10);
  // The metadata arrives: 3 is not in the ISR after all, and no longer holds anything back.
  r->apply(partition(1, 3, {1, 2}, {1, 2, 3}, 1), now);
  fetch(2, 15);
  EXPECT_EQ(r->high_watermark(), 15);
}

TEST_F(Leader, ALeaderWithStaleMetadataAndNoFollowerLosesItsLease) {
  start(partition(1, 3, {1, 2, 3}));
  const Offset last = log.write(3, 2);
  r->on_appended(7, last, -1, now + 30000, now);
  fetch(2, 0);
  now += 2000;
  r->check_lease(false, 3000, now);  // follower 2 fetched 2 s ago
  EXPECT_FALSE(r->lease_lost());
  now += 1500;
  r->check_lease(true, 3000, now);  // no follower for 3.5 s, but the metadata is current
  EXPECT_FALSE(r->lease_lost());
  r->check_lease(false, 3000, now);
  EXPECT_TRUE(r->lease_lost());
  auto c = completions();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].error, ErrorCode::not_enough_replicas_after_append);  // appended: possibly written
  EXPECT_EQ(r->check_append(-1), ErrorCode::not_leader_or_follower);   // refused: not written
  EXPECT_EQ(r->check_append(1), ErrorCode::not_leader_or_follower);
  r->check_lease(true, 3000, now);  // heard from the quorum again: still the leader
  EXPECT_EQ(r->check_append(1), ErrorCode::none);
}

TEST_F(Leader, ALeaderThatLosesItsLeaseCutsWhatNoFollowerWasSentAndKeepsItsEpoch) {
  log.write(2, 4);
  start(partition(1, 3, {1, 2, 3}));
  fetch(2, 4);
  fetch(3, 4);
  const Offset last = log.write(3, 2);  // [4, 5]: not yet fetched
  r->on_appended(7, last, -1, now + 30000, now);
  now += 3500;
  r->check_lease(false, 3000, now);
  ASSERT_TRUE(r->lease_lost());
  auto c = completions();
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].error, ErrorCode::not_leader_or_follower);
  EXPECT_EQ(log.end_offset(), 4);
  // Still this epoch's leader once the metadata says so, its epoch starting at the log end.
  ASSERT_TRUE(epochs.latest());
  EXPECT_EQ(*epochs.latest(), (EpochEntry{3, 4}));
  r->check_lease(true, 3000, now);
  EXPECT_EQ(r->check_append(-1), ErrorCode::none);
}

TEST_F(Leader, ALeaderAloneInItsIsrKeepsItsLease) {
  start(partition(1, 3, {1}));
  now += 60000;
  r->check_lease(false, 3000, now);
  EXPECT_FALSE(r->lease_lost());
}

TEST_F(Leader, AnswersWhereAnEpochEnded) {
  log.write(1, 4);
  epochs.assign(1, 0);
  log.write(2, 3);
  epochs.assign(2, 4);
  start(partition(1, 3, {1, 2, 3}));
  auto a = r->handle_epoch_end(EpochEndRequest{2, 3, 1});
  EXPECT_EQ(a.error, ErrorCode::none);
  EXPECT_EQ(a.leader_epoch, 1);
  EXPECT_EQ(a.end_offset, 4);
  auto b = r->handle_epoch_end(EpochEndRequest{2, 3, 3});
  EXPECT_EQ(b.end_offset, 7);
  EXPECT_EQ(r->handle_epoch_end(EpochEndRequest{2, 2, 1}).error, ErrorCode::fenced_leader_epoch);
}

TEST_F(Leader, TheLowWatermarkIsTheSmallestLogStartOfTheIsr) {
  log.write(3, 10);
  start(partition(1, 3, {1, 2, 3}));
  EXPECT_EQ(r->low_watermark(), kNoOffset) << "the followers have not said where they start";
  fetch(2, 10, 3, 0);
  EXPECT_EQ(r->low_watermark(), kNoOffset);
  fetch(3, 10, 3, 0);
  EXPECT_EQ(r->low_watermark(), 0);
  log.advance_start(6);  // DeleteRecords on the leader
  EXPECT_EQ(r->low_watermark(), 0);
  fetch(2, 10, 3, 6);
  EXPECT_EQ(r->low_watermark(), 0) << "follower 3 still holds [0, 6)";
  fetch(3, 10, 3, 6);
  EXPECT_EQ(r->low_watermark(), 6);
}

TEST_F(Leader, ConsumersMayReadFromInSyncFollowersHoldingTheirPosition) {
  log.write(3, 10);
  start(partition(1, 3, {1, 2, 3}));
  fetch(2, 10, 3, 0);
  fetch(3, 4, 3, 2);
  using Holding = std::vector<std::pair<BrokerId, Offset>>;
  EXPECT_EQ(r->followers_holding(3), (Holding{{2, 10}, {3, 4}}));
  EXPECT_EQ(r->followers_holding(10), (Holding{{2, 10}})) << "3 has not reached the end";
  EXPECT_EQ(r->followers_holding(1), (Holding{{2, 10}})) << "3 deleted offset 1";
  r->apply(partition(1, 3, {1, 3}, {1, 2, 3}, 1), now);
  EXPECT_EQ(r->followers_holding(3), (Holding{{3, 4}})) << "2 left the ISR";
}

}  // namespace
}  // namespace brokerd::replication
