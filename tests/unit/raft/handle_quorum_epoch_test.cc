// BeginQuorumEpoch and EndQuorumEpoch.
#include <gtest/gtest.h>

#include "raft_harness.h"

namespace brokerd::raft::testing {
namespace {

TEST(HandleBeginQuorumEpoch, FollowsNewLeaderAndStartsFetching) {
  Harness h;
  h.start();
  h.receive(2, BeginQuorumEpochRequest{1, 2, 3});
  EXPECT_EQ(h.node->role(), Role::follower);
  EXPECT_EQ(h.node->leader_id(), 2);
  EXPECT_EQ(h.quorum_state.read()->leader_id, 2);
  EXPECT_EQ(h.sent<BeginQuorumEpochResponse>()[0].second.error, Errc::none);
  auto f = h.sent<FetchRequest>();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].first.to, 2);
  EXPECT_EQ(f[0].second.current_leader_epoch, 3);
}

TEST(HandleBeginQuorumEpoch, FencesOlderEpoch) {
  Harness h;
  h.start();
  h.receive(2, BeginQuorumEpochRequest{1, 2, 3});
  h.receive(3, BeginQuorumEpochRequest{1, 3, 2});
  auto r = h.sent<BeginQuorumEpochResponse>()[0].second;
  EXPECT_EQ(r.error, Errc::fenced_leader_epoch);
  EXPECT_EQ(r.leader_epoch, 3);
  EXPECT_EQ(h.node->leader_id(), 2);
}

TEST(HandleBeginQuorumEpoch, CandidateOfSameEpochYields) {
  Harness h;
  h.start();
  h.tick_until(3 * h.config.election_timeout_ms);
  h.receive(2, VoteResponse{Errc::none, kNoReplica, 0, true, true});
  ASSERT_EQ(h.node->role(), Role::candidate);
  h.receive(3, BeginQuorumEpochRequest{1, 3, h.node->epoch()});
  EXPECT_EQ(h.node->role(), Role::follower);
  EXPECT_EQ(h.node->leader_id(), 3);
}

TEST(HandleBeginQuorumEpoch, LeaderResendsUntilAcknowledged) {
  Harness h;
  h.start();
  h.become_leader();
  h.receive(2, BeginQuorumEpochResponse{Errc::none, 1, h.node->epoch()});
  h.tick_until(h.now + 2 * h.config.request_timeout_ms);
  auto again = h.sent<BeginQuorumEpochRequest>();
  ASSERT_FALSE(again.empty());
  for (auto& [m, r] : again) EXPECT_EQ(m.to, 3);
}

TEST(HandleEndQuorumEpoch, PreferredSuccessorRunsAtOnce) {
  Harness h;
  h.start();
  h.become_follower(2, 4);
  h.receive(2, EndQuorumEpochRequest{2, 4, {1, 3}});
  EXPECT_EQ(h.node->role(), Role::unattached);
  EXPECT_EQ(h.sent<EndQuorumEpochResponse>()[0].second.error, Errc::none);
  h.tick_until(h.now + h.config.fetch_backoff_ms + 10);
  EXPECT_EQ(h.node->role(), Role::prospective);
}

TEST(HandleEndQuorumEpoch, IgnoredFromOtherEpoch) {
  Harness h;
  h.start();
  h.become_follower(2, 4);
  h.receive(3, EndQuorumEpochRequest{3, 3, {1}});
  EXPECT_EQ(h.node->role(), Role::follower);
  EXPECT_EQ(h.sent<EndQuorumEpochResponse>()[0].second.error, Errc::fenced_leader_epoch);
}

TEST(Resign, LeaderSendsEndQuorumEpochAndStopsServing) {
  Harness h;
  h.start();
  h.become_leader();
  h.receive(2, FetchRequest{2, h.node->epoch(), 1, h.node->epoch(), 10});
  ASSERT_TRUE(h.node->resign(h.now));
  auto o = h.node->take_output();
  auto end = h.sent<EndQuorumEpochRequest>(o);
  ASSERT_EQ(end.size(), 2u);
  EXPECT_EQ(end[0].second.preferred_candidates.front(), 2);  // the most caught-up voter
  h.receive(2, FetchRequest{2, h.node->epoch(), 1, h.node->epoch(), 10});
  auto f = h.sent<FetchResponse>()[0].second;
  EXPECT_EQ(f.error, Errc::not_leader_or_follower);
  EXPECT_EQ(f.leader_id, kNoReplica);
}

TEST(Restart, LeaderComesBackResigned) {
  Harness h;
  h.start();
  h.become_leader();
  const Epoch e = h.node->epoch();
  h.restart();
  EXPECT_EQ(h.node->role(), Role::resigned);
  EXPECT_EQ(h.node->epoch(), e);
  h.tick_until(h.now + 3 * h.config.election_timeout_ms);
  EXPECT_EQ(h.node->role(), Role::prospective);
}

}  // namespace
}  // namespace brokerd::raft::testing
