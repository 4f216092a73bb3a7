#include "controller/commit_barrier.h"

#include <gtest/gtest.h>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/describe_quorum_request.h"
#include "brokerd/protocol/messages/describe_quorum_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/quorum/kraft_codec.h"

namespace brokerd::controller {
namespace {

// A node's answer to the request, as the controller listener encodes it.
Bytes answer_of(raft::Errc error, int32_t leader, int64_t high_watermark) {
  raft::DescribeQuorumResponse q;
  q.error = error;
  q.leader_id = leader;
  q.leader_epoch = 4;
  q.high_watermark = high_watermark;
  q.current_voters = {{1, 90, 0, 0}, {2, 90, 0, 0}, {3, 88, 0, 0}};
  return quorum::encode_describe_quorum(kHighWatermarkVersion, q, {{1, "a", 1}, {2, "b", 2}, {3, "c", 3}});
}

TEST(CommitBarrier, TheRequestAsksForTheMetadataLog) {
  const Bytes body = high_watermark_request();
  protocol::Reader r(body);
  protocol::DescribeQuorumRequest req;
  req.decode(r, kHighWatermarkVersion);
  EXPECT_EQ(r.remaining(), 0u);
  ASSERT_EQ(req.topics.size(), 1u);
  EXPECT_EQ(req.topics[0].topic_name, quorum::kMetadataTopic);
  ASSERT_EQ(req.topics[0].partitions.size(), 1u);
  EXPECT_EQ(req.topics[0].partitions[0].partition_index, 0);
}

TEST(CommitBarrier, TheLeaderAskedGivesItsHighWatermark) {
  EXPECT_EQ(leader_high_watermark(answer_of(raft::Errc::none, 2, 90), 2), 90);
  EXPECT_EQ(leader_high_watermark(answer_of(raft::Errc::none, 2, 0), 2), 0);
}

TEST(CommitBarrier, NoHighWatermarkFromANodeThatNoLongerLeads) {
  // It answers that another node leads now, or that it is no leader: its high watermark may
  // not cover what it committed as the leader.
  EXPECT_EQ(leader_high_watermark(answer_of(raft::Errc::none, 3, 90), 2), std::nullopt);
  EXPECT_EQ(leader_high_watermark(answer_of(raft::Errc::not_leader_or_follower, 3, -1), 2), std::nullopt);
  EXPECT_EQ(leader_high_watermark(answer_of(raft::Errc::not_leader_or_follower, 2, 90), 2), std::nullopt);
  EXPECT_EQ(leader_high_watermark(answer_of(raft::Errc::none, 2, -1), 2), std::nullopt);
}

TEST(CommitBarrier, NoHighWatermarkFromARefusalOrGarbage) {
  protocol::DescribeQuorumResponse refused;
  refused.error_code = 31;  // CLUSTER_AUTHORIZATION_FAILED
  EXPECT_EQ(leader_high_watermark(protocol::encode_body(refused, kHighWatermarkVersion), 2), std::nullopt);
  const Bytes garbage{std::byte{1}, std::byte{2}, std::byte{3}};
  EXPECT_EQ(leader_high_watermark(garbage, 2), std::nullopt);
  EXPECT_EQ(leader_high_watermark({}, 2), std::nullopt);
}

TEST(CommitBarrier, OnlyTheControllersReadsAreAnsweredAtOnce) {
  EXPECT_FALSE(changes_metadata(55));  // DescribeQuorum
  EXPECT_FALSE(changes_metadata(46));  // ListPartitionReassignments
  for (int16_t write : {30, 31, 43, 45, 49, 51, 30000, 30001, 30003, 30004}) EXPECT_TRUE(changes_metadata(write)) << write;
}

}  // namespace
}  // namespace brokerd::controller
