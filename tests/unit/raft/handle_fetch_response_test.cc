// Fetch on the follower and the observer.
#include <gtest/gtest.h>

#include "raft_harness.h"

namespace brokerd::raft::testing {
namespace {

Entry entry(Offset o, Epoch e, std::string p = "x") { return Entry{o, e, false, std::move(p)}; }

struct FollowerFixture : ::testing::Test {
  Harness h;
  int64_t corr = 0;
  void SetUp() override {
    h.start();
    h.become_follower(2, 5);
    corr = pending();
  }
  int64_t pending() {
    auto f = h.sent<FetchRequest>();
    return f.empty() ? 0 : f.back().first.correlation_id;
  }
  RaftOutput& answer(FetchResponse r) {
    r.leader_id = 2;
    r.leader_epoch = r.leader_epoch == 0 ? 5 : r.leader_epoch;
    return h.receive(2, std::move(r), corr);
  }
};

TEST_F(FollowerFixture, AppendsFlushesThenFetchesAgain) {
  FetchResponse r;
  r.high_watermark = 1;
  r.entries = {entry(0, 5), entry(1, 5)};
  auto& o = answer(r);
  EXPECT_EQ(h.log.end_offset(), 2);
  ASSERT_TRUE(o.flush_up_to);
  EXPECT_EQ(*o.flush_up_to, 2);
  EXPECT_TRUE(h.sent<FetchRequest>().empty());  // not before the flush
  ASSERT_EQ(o.committed.size(), 1u);
  EXPECT_EQ(h.node->high_watermark(), 1);
  auto& after = h.flush();
  auto f = h.sent<FetchRequest>(after);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].second.fetch_offset, 2);
  EXPECT_EQ(f[0].second.last_fetched_epoch, 5);
}

TEST_F(FollowerFixture, HighWatermarkLimitedByLocalLog) {
  FetchResponse r;
  r.high_watermark = 10;
  r.entries = {entry(0, 5)};
  answer(r);
  EXPECT_EQ(h.node->high_watermark(), 1);
}

TEST_F(FollowerFixture, ConfirmedOnlyByAnAnswerWhoseHighWatermarkItHolds) {
  EXPECT_EQ(h.node->confirmed_at(h.now), -1);
  FetchResponse r;
  r.high_watermark = 5;
  r.entries = {entry(0, 5), entry(1, 5)};
  answer(r);  // behind the leader's high watermark: not confirmed
  EXPECT_EQ(h.node->confirmed_at(h.now), -1);
  h.flush();
  corr = pending();
  const int64_t sent = h.now;
  h.now += 100;
  r.entries = {entry(2, 5), entry(3, 5), entry(4, 5)};
  answer(r);
  // As of the fetch, not the answer: the answer may have waited while this process stood still.
  EXPECT_EQ(h.node->confirmed_at(h.now + 900), sent);
}

TEST_F(FollowerFixture, AnAnswerReadAfterAStallConfirmsOnlyTheTimeOfItsFetch) {
  FetchResponse r;
  r.high_watermark = 1;
  r.entries = {entry(0, 5)};
  const int64_t sent = h.now;
  h.now += 10'000;  // stopped with the answer in its socket
  answer(r);
  EXPECT_EQ(h.node->confirmed_at(h.now), sent);
}

TEST_F(FollowerFixture, IgnoresLateAndDuplicatedResponses) {
  FetchResponse r;
  r.high_watermark = 0;
  r.entries = {entry(0, 5)};
  answer(r);
  h.flush();
  h.receive(2, r, corr);  // the same answer again
  EXPECT_EQ(h.log.end_offset(), 1);
  h.receive(2, r, 12345);  // an answer to nothing we asked
  EXPECT_EQ(h.log.end_offset(), 1);
}

TEST_F(FollowerFixture, TruncatesOnDivergence) {
  h.seed_log({1, 1, 3, 3, 3});
  FetchResponse r;
  r.diverging_epoch = OffsetAndEpoch{3, 3};  // leader's epoch 3 ends at 3
  auto& o = answer(r);
  EXPECT_EQ(h.log.end_offset(), 3);
  auto f = h.sent<FetchRequest>(o);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].second.fetch_offset, 3);
  EXPECT_EQ(f[0].second.last_fetched_epoch, 3);
}

TEST_F(FollowerFixture, TruncatesToLocalEndOfOlderEpoch) {
  h.seed_log({1, 1, 3, 3});
  FetchResponse r;
  r.diverging_epoch = OffsetAndEpoch{5, 2};  // leader has epoch 2 up to 5; we have no epoch 2
  answer(r);
  EXPECT_EQ(h.log.end_offset(), 2);
}

TEST_F(FollowerFixture, FencedErrorMovesToNewEpoch) {
  FetchResponse r;
  r.error = Errc::fenced_leader_epoch;
  r.leader_epoch = 7;
  r.leader_id = 3;
  h.receive(2, r, corr);
  EXPECT_EQ(h.node->epoch(), 7);
  EXPECT_EQ(h.node->leader_id(), 3);
}

TEST_F(FollowerFixture, LeaderResignedStartsPreVote) {
  FetchResponse r;
  r.error = Errc::not_leader_or_follower;
  r.leader_epoch = 5;
  r.leader_id = kNoReplica;
  h.receive(2, r, corr);
  EXPECT_EQ(h.node->role(), Role::prospective);
}

TEST_F(FollowerFixture, SilentLeaderTriggersPreVote) {
  h.tick_until(h.now + h.config.fetch_timeout_ms + 20);
  EXPECT_EQ(h.node->role(), Role::prospective);
  EXPECT_EQ(h.node->epoch(), 5);
  EXPECT_FALSE(h.sent<VoteRequest>().empty());
}

TEST_F(FollowerFixture, RetriesUnansweredFetch) {
  h.tick_until(h.now + h.config.request_timeout_ms + 20);
  EXPECT_EQ(h.sent<FetchRequest>().size(), 1u);
}

TEST_F(FollowerFixture, ABrokenConnectionResendsTheFetchAfterTheBackoffOnly) {
  h.node->request_failed(2, corr, false, h.now);
  EXPECT_TRUE(h.node->take_output().messages.empty());
  h.tick_until(h.now + h.config.fetch_backoff_ms + 10);
  EXPECT_EQ(h.sent<FetchRequest>().size(), 1u);  // not the request timeout
  EXPECT_EQ(h.node->role(), Role::follower);
}

TEST_F(FollowerFixture, ALeaderWhoseAddressRefusesConnectionsIsLeftAtOnceByTheFirstInTurn) {
  h.node->request_failed(2, corr, true, h.now);
  EXPECT_EQ(h.node->role(), Role::prospective);  // node 1: first of the voters but the leader
  EXPECT_EQ(h.node->epoch(), 5);  // pre-vote first: the others may still hear the leader
  EXPECT_FALSE(h.sent<VoteRequest>(h.node->take_output()).empty());
}

TEST(RefusedLeader, TheNextInTurnWaitsARequestTimeoutAndGrantsPreVotesMeanwhile) {
  Harness h(3, {1, 2, 3});
  h.start();
  h.become_follower(1, 5);
  const auto corr = h.sent<FetchRequest>().back().first.correlation_id;
  h.node->request_failed(1, corr, true, h.now);
  EXPECT_EQ(h.node->role(), Role::follower);
  // Node 2, first in turn, asks: the refused leader does not count as alive.
  auto& o = h.receive(2, VoteRequest{6, 2, 3, 0, 0, true});
  auto votes = h.sent<VoteResponse>(o);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_TRUE(votes[0].second.vote_granted);
  h.tick_until(h.now + h.config.request_timeout_ms + 10);
  EXPECT_EQ(h.node->role(), Role::prospective);
}

TEST(RefusedLeader, AnAnswerFromTheLeaderUndoesTheRefusal) {
  Harness h(3, {1, 2, 3});
  h.start();
  h.become_follower(1, 5);
  h.node->request_failed(1, h.sent<FetchRequest>().back().first.correlation_id, true, h.now);
  h.tick_until(h.now + h.config.fetch_backoff_ms + 10);
  auto fetches = h.sent<FetchRequest>();
  ASSERT_EQ(fetches.size(), 1u);
  FetchResponse r;
  r.leader_id = 1;
  r.leader_epoch = 5;
  h.receive(1, r, fetches[0].first.correlation_id);
  auto& o = h.receive(2, VoteRequest{6, 2, 3, 0, 0, true});
  auto votes = h.sent<VoteResponse>(o);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_FALSE(votes[0].second.vote_granted);  // the leader answers again: it is alive
  h.tick_until(h.now + h.config.request_timeout_ms + 10);
  EXPECT_EQ(h.node->role(), Role::follower);
}

TEST_F(FollowerFixture, ALateRefusalOfAnOlderRequestChangesNothing) {
  h.node->request_failed(2, corr + 1000, true, h.now);  // not the outstanding fetch
  EXPECT_EQ(h.node->role(), Role::follower);
  h.tick_until(h.now + h.config.request_timeout_ms / 2);
  EXPECT_EQ(h.node->role(), Role::follower);
}

TEST_F(FollowerFixture, AWinnerAfterARefusalNamesTheRefusedLeaderAsItsPredecessor) {
  h.node->request_failed(2, corr, true, h.now);
  ASSERT_EQ(h.node->role(), Role::prospective);
  EXPECT_EQ(h.node->refused_predecessor(), kNoReplica);  // only a leader names one
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 5, true, true});
  ASSERT_EQ(h.node->role(), Role::candidate);
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 6, true, false});
  ASSERT_EQ(h.node->role(), Role::leader);
  EXPECT_EQ(h.node->refused_predecessor(), 2);
}

TEST_F(FollowerFixture, AVoterStillFollowingTheRefusedLeaderIsAskedAgainSoon) {
  h.node->request_failed(2, corr, true, h.now);
  ASSERT_EQ(h.node->role(), Role::prospective);
  h.node->take_output();
  h.receive(3, VoteResponse{Errc::none, 2, 5, false, true});  // node 3 has not seen the refusal yet
  h.tick_until(h.now + h.config.request_timeout_ms + 10);
  bool asked_again = false;
  for (auto& [m, r] : h.sent<VoteRequest>()) asked_again |= m.to == 3 && r.pre_vote;
  EXPECT_TRUE(asked_again);
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 5, true, true});
  EXPECT_EQ(h.node->role(), Role::candidate);
}

TEST_F(FollowerFixture, AfterASilenceARejectionNamingTheLostLeaderStands) {
  h.tick_until(h.now + h.config.fetch_timeout_ms + 20);
  ASSERT_EQ(h.node->role(), Role::prospective);
  h.node->take_output();
  h.receive(3, VoteResponse{Errc::none, 2, 5, false, true});
  h.tick_until(h.now + h.config.request_timeout_ms + 10);
  for (auto& [m, r] : h.sent<VoteRequest>()) EXPECT_NE(m.to, 3);
}

TEST_F(FollowerFixture, AWinnerAfterASilenceNamesNoPredecessor) {
  h.tick_until(h.now + h.config.fetch_timeout_ms + 20);
  ASSERT_EQ(h.node->role(), Role::prospective);
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 5, true, true});
  h.receive(3, VoteResponse{Errc::none, kNoReplica, 6, true, false});
  ASSERT_EQ(h.node->role(), Role::leader);
  EXPECT_EQ(h.node->refused_predecessor(), kNoReplica);  // a silent leader may be alive
}

TEST_F(FollowerFixture, ARefusalFromAnotherVoterChangesNothing) {
  h.node->request_failed(3, 12345, true, h.now);
  EXPECT_EQ(h.node->role(), Role::follower);
  EXPECT_EQ(h.node->leader_id(), 2);
}

TEST(ObserverFetch, DiscoversLeaderThroughAVoter) {
  Harness h(4, {1, 2, 3});
  h.start();
  h.tick_until(10);
  auto f = h.sent<FetchRequest>();
  ASSERT_EQ(f.size(), 1u);
  FetchResponse r;
  r.error = Errc::not_leader_or_follower;
  r.leader_id = 2;
  r.leader_epoch = 3;
  h.receive(f[0].first.to, r, f[0].first.correlation_id);
  EXPECT_EQ(h.node->role(), Role::follower);
  EXPECT_EQ(h.node->leader_id(), 2);
  auto next = h.sent<FetchRequest>();
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].first.to, 2);
  // An observer never runs for election, even when its leader goes silent.
  h.tick_until(h.now + 3 * h.config.fetch_timeout_ms);
  EXPECT_NE(h.node->role(), Role::prospective);
  EXPECT_NE(h.node->role(), Role::candidate);
}

}  // namespace
}  // namespace brokerd::raft::testing
