// Fetch on the leader.
#include <gtest/gtest.h>

#include "raft_harness.h"

namespace brokerd::raft::testing {
namespace {

// Leader 1 of a three-voter quorum whose log holds epochs {1,1,2,2} before its own epoch.
struct LeaderFixture : ::testing::Test {
  Harness h;
  Epoch e = 0;
  void SetUp() override {
    h.start();
    h.quorum_state.write({3, kNoReplica, kNoReplica});  // the leader's epoch will be 4
    h.seed_log({1, 1, 2, 2});
    h.start();
    h.become_leader();
    e = h.node->epoch();
    ASSERT_EQ(h.node->role(), Role::leader);
    ASSERT_EQ(h.node->epoch_start_offset(), 4);
  }
  FetchResponse fetch(ReplicaId from, Offset offset, Epoch last, Epoch epoch = -1) {
    h.receive(from, FetchRequest{from, epoch < 0 ? e : epoch, offset, last, 10});
    auto r = h.sent<FetchResponse>();
    EXPECT_EQ(r.size(), 1u);
    return r.empty() ? FetchResponse{} : r[0].second;
  }
};

TEST_F(LeaderFixture, ServesEntriesFromFetchOffset) {
  auto r = fetch(2, 2, 1);
  EXPECT_EQ(r.error, Errc::none);
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_EQ(r.entries[0].offset, 2);
  EXPECT_FALSE(r.diverging_epoch);
}

TEST_F(LeaderFixture, OldEpochEntriesDoNotCommitByCounting) {
  // A majority has offsets 0..3 (all from older epochs): not enough.
  fetch(2, 4, 2);
  EXPECT_EQ(h.node->high_watermark(), 0);
  // Once a majority holds the epoch's own first entry, everything before it commits too.
  auto r = fetch(2, 5, e);
  EXPECT_EQ(h.node->high_watermark(), 5);
  EXPECT_EQ(r.high_watermark, 5);
}

TEST_F(LeaderFixture, HighWatermarkNeedsAMajority) {
  h.node->propose("a", h.now);
  h.node->propose("b", h.now);
  h.flush();
  fetch(3, 5, e);
  EXPECT_EQ(h.node->high_watermark(), 5);
  // The leader alone has 7: the high watermark stays at what a majority has.
  EXPECT_EQ(h.log.flushed_end_offset(), 7);
  fetch(2, 6, e);
  EXPECT_EQ(h.node->high_watermark(), 6);
}

TEST_F(LeaderFixture, LeaderCountsOnlyItsFlushedEntries) {
  h.node->propose("a", h.now);  // not flushed
  fetch(2, 6, e);
  fetch(3, 6, e);
  EXPECT_EQ(h.node->high_watermark(), 6);
  EXPECT_EQ(h.log.end_offset(), 6);
}

TEST_F(LeaderFixture, DetectsDivergenceWithinEpoch) {
  // The follower claims offsets up to 6 in epoch 2; epoch 2 ends at 4 here.
  auto r = fetch(2, 6, 2);
  ASSERT_TRUE(r.diverging_epoch);
  EXPECT_EQ(r.diverging_epoch->epoch, 2);
  EXPECT_EQ(r.diverging_epoch->offset, 4);
  EXPECT_TRUE(r.entries.empty());
}

TEST_F(LeaderFixture, DetectsDivergenceOnUnknownEpoch) {
  // Epoch 3 never had entries here: the answer is the largest epoch below it.
  auto r = fetch(2, 7, 3);
  ASSERT_TRUE(r.diverging_epoch);
  EXPECT_EQ(r.diverging_epoch->epoch, 2);
  EXPECT_EQ(r.diverging_epoch->offset, 4);
}

TEST_F(LeaderFixture, SendsSnapshotIdBelowLogStart) {
  fetch(2, 5, e);
  fetch(3, 5, e);
  ASSERT_EQ(h.node->high_watermark(), 5);
  ASSERT_TRUE(h.node->take_snapshot(4, "state"));
  EXPECT_EQ(h.log.start_offset(), 4);
  auto r = fetch(3, 1, 1);
  ASSERT_TRUE(r.snapshot_id);
  EXPECT_EQ(r.snapshot_id->offset, 4);
  EXPECT_EQ(r.snapshot_id->epoch, 2);
}

TEST_F(LeaderFixture, FencesStaleEpochAndRejectsNewer) {
  auto r = fetch(2, 0, 0, e - 1);
  EXPECT_EQ(r.error, Errc::fenced_leader_epoch);
  EXPECT_EQ(r.leader_id, 1);
  EXPECT_EQ(r.leader_epoch, e);
  EXPECT_EQ(fetch(2, 0, 0, e + 1).error, Errc::unknown_leader_epoch);
}

TEST_F(LeaderFixture, ObserverProgressDoesNotCount) {
  fetch(4, 5, e);
  EXPECT_EQ(h.node->high_watermark(), 0);
  auto q = h.node->describe_quorum(h.now);
  ASSERT_EQ(q.observers.size(), 1u);
  EXPECT_EQ(q.observers[0].replica_id, 4);
  EXPECT_EQ(q.observers[0].log_end_offset, 5);
}

TEST_F(LeaderFixture, CheckQuorumResignsWithoutFetches) {
  h.tick_until(h.now + h.config.fetch_timeout_ms + 50);
  EXPECT_EQ(h.node->role(), Role::resigned);
}

TEST_F(LeaderFixture, ConfirmedWhenAMajorityLastFetched) {
  EXPECT_EQ(h.node->confirmed_at(h.now), -1);  // no follower has fetched in this epoch
  const int64_t first = h.now;
  fetch(2, 5, e);
  EXPECT_EQ(h.node->confirmed_at(h.now + 100), first);  // the leader and voter 2 make a majority
  h.now += 500;
  fetch(3, 5, e);
  EXPECT_EQ(h.node->confirmed_at(h.now), h.now);  // the most recent majority: the leader and 3
  fetch(4, 5, e);  // an observer does not vouch for the leader
  EXPECT_EQ(h.node->confirmed_at(h.now + 700), h.now);
}

TEST_F(LeaderFixture, FetchesReadJustAfterAStallVouchOnlyForTheTimeBeforeIt) {
  fetch(2, 5, e);
  fetch(3, 5, e);
  const int64_t before = h.now;
  // The process stood still; the voters' fetches queued in its sockets meanwhile, and they
  // may have elected another leader. Read now, they say nothing about the present.
  h.now += 10'000;
  fetch(2, 5, e);
  fetch(3, 5, e);
  EXPECT_EQ(h.node->confirmed_at(h.now), before);
  // A voter still fetching a fetch timeout later does follow this leader.
  for (int64_t until = h.now + h.config.fetch_timeout_ms; h.now <= until;) {
    h.now += 100;
    fetch(2, 5, e);
  }
  EXPECT_EQ(h.node->confirmed_at(h.now), h.now);
}

TEST_F(LeaderFixture, DescribeQuorumReportsVoters) {
  fetch(2, 5, e);
  auto q = h.node->describe_quorum(h.now);
  EXPECT_EQ(q.error, Errc::none);
  EXPECT_EQ(q.leader_id, 1);
  EXPECT_EQ(q.leader_epoch, e);
  EXPECT_EQ(q.high_watermark, 5);
  ASSERT_EQ(q.current_voters.size(), 3u);
  EXPECT_EQ(q.current_voters[1].replica_id, 2);
  EXPECT_EQ(q.current_voters[1].log_end_offset, 5);
  EXPECT_EQ(q.current_voters[2].log_end_offset, -1);
}

TEST(DescribeQuorum, NonLeaderAnswersNotLeader) {
  Harness h;
  h.start();
  h.become_follower(2, 3);
  auto q = h.node->describe_quorum(h.now);
  EXPECT_EQ(q.error, Errc::not_leader_or_follower);
  EXPECT_EQ(q.leader_id, 2);
}

TEST(HandleFetch, NonLeaderNamesItsLeader) {
  Harness h;
  h.start();
  h.become_follower(2, 3);
  h.receive(4, FetchRequest{4, 0, 0, 0, 10});
  auto r = h.sent<FetchResponse>()[0].second;
  EXPECT_EQ(r.error, Errc::not_leader_or_follower);
  EXPECT_EQ(r.leader_id, 2);
  EXPECT_EQ(r.leader_epoch, 3);
}

}  // namespace
}  // namespace brokerd::raft::testing
