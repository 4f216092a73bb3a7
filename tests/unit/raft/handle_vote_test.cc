#include <gtest/gtest.h>

#include "raft_harness.h"

namespace brokerd::raft::testing {
namespace {

VoteRequest vote(Epoch epoch, ReplicaId candidate, Epoch last_epoch, Offset end, bool pre = false) {
  return VoteRequest{epoch, candidate, 1, last_epoch, end, pre};
}

TEST(HandleVote, GrantsUpToDateCandidateAndPersistsBeforeAnswering) {
  Harness h;
  h.start();
  h.receive(2, vote(1, 2, 0, 0));
  auto r = h.sent<VoteResponse>();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(r[0].second.vote_granted);
  EXPECT_EQ(h.quorum_state.read()->voted_for, 2);
  EXPECT_EQ(h.quorum_state.read()->epoch, 1);
}

TEST(HandleVote, RejectsCandidateWithShorterLog) {
  Harness h;
  h.start();
  h.seed_log({1, 1, 2});
  h.receive(2, vote(3, 2, 2, 2));  // same last epoch, shorter
  EXPECT_FALSE(h.sent<VoteResponse>()[0].second.vote_granted);
  h.receive(3, vote(3, 3, 1, 9));  // longer, but older last epoch
  EXPECT_FALSE(h.sent<VoteResponse>()[0].second.vote_granted);
  h.receive(3, vote(3, 3, 2, 3));
  EXPECT_TRUE(h.sent<VoteResponse>()[0].second.vote_granted);
}

TEST(HandleVote, VotesOncePerEpochEvenAfterRestart) {
  Harness h;
  h.start();
  h.receive(2, vote(4, 2, 0, 0));
  EXPECT_TRUE(h.sent<VoteResponse>()[0].second.vote_granted);
  h.receive(3, vote(4, 3, 0, 0));
  EXPECT_FALSE(h.sent<VoteResponse>()[0].second.vote_granted);
  h.restart();
  h.receive(3, vote(4, 3, 0, 0));
  EXPECT_FALSE(h.sent<VoteResponse>()[0].second.vote_granted);
  h.receive(2, vote(4, 2, 0, 0));  // a duplicate of the granted request is granted again
  EXPECT_TRUE(h.sent<VoteResponse>()[0].second.vote_granted);
}

TEST(HandleVote, RejectsOlderEpochAndAnswersWithCurrent) {
  Harness h;
  h.start();
  h.receive(2, vote(5, 2, 0, 0));
  h.receive(3, vote(4, 3, 0, 0));
  auto r = h.sent<VoteResponse>()[0].second;
  EXPECT_FALSE(r.vote_granted);
  EXPECT_EQ(r.leader_epoch, 5);
}

TEST(HandleVote, PreVoteChangesNothing) {
  Harness h;
  h.start();
  const int writes = h.quorum_state.writes();
  h.receive(2, vote(3, 2, 0, 0, true));
  auto r = h.sent<VoteResponse>()[0].second;
  EXPECT_TRUE(r.vote_granted);
  EXPECT_TRUE(r.pre_vote);
  EXPECT_EQ(h.node->epoch(), 0);
  EXPECT_EQ(h.node->voted_for(), kNoReplica);
  EXPECT_EQ(h.quorum_state.writes(), writes);
}

TEST(HandleVote, PreVoteRejectedWhileLeaderIsAlive) {
  Harness h;
  h.start();
  h.become_follower(3, 2);
  h.receive(2, vote(3, 2, 0, 0, true));
  auto r = h.sent<VoteResponse>()[0].second;
  EXPECT_FALSE(r.vote_granted);
  EXPECT_EQ(r.leader_id, 3);  // tells the prospective candidate whom to follow
  // Once the leader has been silent for the fetch timeout, the same probe succeeds.
  h.tick_until(h.now + h.config.fetch_timeout_ms / 2);
  h.now = h.now + h.config.fetch_timeout_ms;
  h.receive(2, vote(3, 2, 0, 0, true));
  EXPECT_TRUE(h.sent<VoteResponse>()[0].second.vote_granted);
}

TEST(HandleVote, LeaderStepsDownOnHigherEpochVote) {
  Harness h;
  h.start();
  h.become_leader();
  ASSERT_EQ(h.node->role(), Role::leader);
  const Epoch e = h.node->epoch();
  h.receive(3, vote(e + 1, 3, e, h.log.end_offset()));
  EXPECT_EQ(h.node->role(), Role::unattached);
  EXPECT_EQ(h.node->epoch(), e + 1);
  EXPECT_TRUE(h.sent<VoteResponse>()[0].second.vote_granted);
}

TEST(HandleVote, LeaderRejectsPreVote) {
  Harness h;
  h.start();
  h.become_leader();
  h.receive(3, vote(h.node->epoch() + 1, 3, 9, 100, true));
  EXPECT_FALSE(h.sent<VoteResponse>()[0].second.vote_granted);
  EXPECT_EQ(h.node->role(), Role::leader);
}

TEST(HandleVoteResponse, PreVoteMajorityMakesCandidateThenLeader) {
  Harness h;
  h.start();
  h.tick_until(3 * h.config.election_timeout_ms);
  ASSERT_EQ(h.node->role(), Role::prospective);
  auto pre = h.sent<VoteRequest>();
  ASSERT_GE(pre.size(), 2u);  // both other voters, possibly resent
  for (auto& [m, r] : pre) {
    EXPECT_TRUE(r.pre_vote);
    EXPECT_EQ(r.candidate_epoch, 1);
  }
  EXPECT_EQ(h.node->epoch(), 0);  // pre-vote does not bump the epoch
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 0, true, true});
  EXPECT_EQ(h.node->role(), Role::candidate);
  EXPECT_EQ(h.node->epoch(), 1);
  EXPECT_EQ(h.quorum_state.read()->voted_for, 1);
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 1, true, false});
  EXPECT_EQ(h.node->role(), Role::leader);
  // The epoch opens with a control entry, and BeginQuorumEpoch goes to both voters.
  ASSERT_EQ(h.log.end_offset(), 1);
  EXPECT_TRUE(h.log.entry_at(0)->control);
  EXPECT_EQ(h.sent<BeginQuorumEpochRequest>().size(), 2u);
}

TEST(HandleVoteResponse, PreVoteRejectionNamingLeaderMakesFollower) {
  Harness h;
  h.start();
  h.tick_until(3 * h.config.election_timeout_ms);
  h.receive(2, VoteResponse{Errc::none, 3, 0, false, true});
  EXPECT_EQ(h.node->role(), Role::follower);
  EXPECT_EQ(h.node->leader_id(), 3);
}

TEST(HandleVoteResponse, HigherEpochEndsCandidacy) {
  Harness h;
  h.start();
  h.tick_until(3 * h.config.election_timeout_ms);
  h.receive(2, VoteResponse{Errc::none, kNoReplica, 0, true, true});
  ASSERT_EQ(h.node->role(), Role::candidate);
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 7, false, false});
  EXPECT_EQ(h.node->role(), Role::unattached);
  EXPECT_EQ(h.node->epoch(), 7);
}

TEST(HandleVoteResponse, SingleVoterElectsItself) {
  Harness h(1, {1});
  h.start();
  h.tick_until(3 * h.config.election_timeout_ms);
  EXPECT_EQ(h.node->role(), Role::leader);
  h.flush();
  EXPECT_EQ(h.node->high_watermark(), 1);
}

TEST(HandleVote, ObserverRefusesToVote) {
  Harness h(4, {1, 2, 3});
  h.start();
  h.receive(2, vote(1, 2, 0, 0));
  auto r = h.sent<VoteResponse>()[0].second;
  EXPECT_FALSE(r.vote_granted);
  EXPECT_EQ(r.error, Errc::inconsistent_voter_set);
}

}  // namespace
}  // namespace brokerd::raft::testing
