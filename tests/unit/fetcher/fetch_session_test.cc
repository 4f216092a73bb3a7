#include "brokerd/fetcher/fetch_session.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "brokerd/kafka/fetch_sessions.h"

namespace brokerd::fetcher {
namespace {

using partitions::TopicPartition;
using protocol::ErrorCode;

FetchWant want(const std::string& topic, int32_t partition, int64_t offset, int32_t epoch = 3) {
  return {{topic, partition}, {epoch, offset, 0, 1 << 20}};
}

std::vector<TopicPartition> sent(const FollowerFetchSession::Plan& p) {
  std::vector<TopicPartition> out;
  for (const auto& w : p.send) out.push_back(w.tp);
  return out;
}

TEST(FollowerFetchSession, FirstRequestIsFullAndOpensASession) {
  FollowerFetchSession s;
  const std::vector<FetchWant> wanted{want("a", 0, 10), want("a", 1, 20)};
  auto p = s.plan(wanted);
  EXPECT_TRUE(p.full());
  EXPECT_EQ(p.session_id, 0);
  EXPECT_EQ(p.send.size(), 2u);
  EXPECT_TRUE(p.forget.empty());
  s.answered(p, 77);
  EXPECT_EQ(s.session_id(), 77);
  EXPECT_EQ(s.size(), 2u);
}

TEST(FollowerFetchSession, LaterRequestsNameOnlyWhatMovedAndForgetWhatLeft) {
  FollowerFetchSession s;
  s.answered(s.plan({want("a", 0, 10), want("a", 1, 20), want("b", 0, 5)}), 77);

  auto same = s.plan({want("a", 0, 10), want("a", 1, 20), want("b", 0, 5)});
  EXPECT_FALSE(same.full());
  EXPECT_EQ(same.session_id, 77);
  EXPECT_EQ(same.epoch, 1);
  EXPECT_TRUE(same.send.empty());
  EXPECT_TRUE(same.forget.empty());
  s.answered(same, 77);

  // a-1 moved, b-0 has a new leader epoch, a-0 is no longer fetched, c-0 is new.
  auto next = s.plan({want("a", 1, 25), want("b", 0, 5, 4), want("c", 0, 0)});
  EXPECT_EQ(next.epoch, 2);
  auto names = sent(next);
  std::sort(names.begin(), names.end(), [](const auto& x, const auto& y) { return x.topic < y.topic; });
  EXPECT_EQ(names, (std::vector<TopicPartition>{{"a", 1}, {"b", 0}, {"c", 0}}));
  EXPECT_EQ(next.forget, (std::vector<TopicPartition>{{"a", 0}}));
  s.answered(next, 77);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.plan({want("a", 1, 25), want("b", 0, 5, 4), want("c", 0, 0)}).epoch, 3);
}

TEST(FollowerFetchSession, AFailureStartsAgainWithAFullRequest) {
  FollowerFetchSession s;
  s.answered(s.plan({want("a", 0, 10)}), 77);
  s.failed(ErrorCode::network_exception);
  auto p = s.plan({want("a", 0, 10)});
  EXPECT_TRUE(p.full());
  EXPECT_EQ(p.session_id, 77);  // closes the old session while opening a new one
  EXPECT_EQ(p.send.size(), 1u);

  s.failed(ErrorCode::fetch_session_id_not_found);
  p = s.plan({want("a", 0, 10)});
  EXPECT_TRUE(p.full());
  EXPECT_EQ(p.session_id, 0);  // the leader no longer knows it
}

TEST(FollowerFetchSession, WithoutASessionEveryRequestIsFull) {
  FollowerFetchSession s;
  s.answered(s.plan({want("a", 0, 10)}), 0);
  auto p = s.plan({want("a", 0, 10)});
  EXPECT_TRUE(p.full());
  EXPECT_EQ(p.send.size(), 1u);
}

TEST(FollowerFetchSession, RemembersWhatTheLastAnswerSaidOfEachPartition) {
  FollowerFetchSession s;
  auto p = s.plan({want("a", 0, 10), want("a", 1, 0)});
  s.answered(p, 77);
  s.answered_partition({"a", 0}, 12, 0);
  s.answered_partition({"a", 1}, 0, 0);
  ASSERT_TRUE(s.last_answer({"a", 0}));
  EXPECT_EQ(s.last_answer({"a", 0})->high_watermark, 12);
  auto q = s.plan({want("a", 0, 12), want("a", 1, 0)});
  s.answered(q, 77);
  s.answered_partition({"a", 0}, 15, 2);
  EXPECT_EQ(s.last_answer({"a", 0})->high_watermark, 15);
  EXPECT_EQ(s.last_answer({"a", 0})->log_start_offset, 2);
  EXPECT_EQ(s.last_answer({"a", 1})->high_watermark, 0);  // left out: unchanged
  EXPECT_FALSE(s.last_answer({"z", 0}));
}

// Against the leader's session cache: over many rounds of random changes (partitions moving,
// joining, leaving, failed requests), the leader reads exactly the partitions the follower
// wants, at the positions it wants, and every answer the follower misses it can rebuild.
TEST(FollowerFetchSession, StaysInStepWithTheLeadersSessionCache) {
  kafka::FetchSessionCache leader(10, 1);
  FollowerFetchSession follower;
  std::mt19937 rng(42);
  std::map<int32_t, int64_t> offsets;  // partition of topic "t" -> fetch offset
  std::map<int32_t, int64_t> leader_hw;
  for (int32_t p = 0; p < 50; ++p) offsets[p] = 0;
  int64_t now = 0;
  size_t incremental = 0;
  for (int round = 0; round < 2000; ++round) {
    now += 10;
    // Change a few things.
    for (int k = 0; k < 3; ++k) {
      const int32_t p = static_cast<int32_t>(rng() % 80);
      switch (rng() % 4) {
        case 0: offsets.erase(p); break;
        case 1: offsets[p] += 1; break;
        default: leader_hw[p] += 1; break;
      }
    }
    std::vector<FetchWant> wanted;
    for (const auto& [p, off] : offsets) wanted.push_back(want("t", p, off));
    const auto plan = follower.plan(wanted);

    kafka::FetchSessionRequest req;
    req.session_id = plan.session_id;
    req.epoch = plan.epoch;
    req.replica_id = 2;
    for (const auto& w : plan.send) {
      kafka::SessionPartition sp;
      sp.key = {w.tp.topic, {}, w.tp.partition};
      sp.fetch_offset = w.position.fetch_offset;
      sp.current_leader_epoch = w.position.current_leader_epoch;
      sp.max_bytes = w.position.max_bytes;
      req.partitions.push_back(sp);
    }
    for (const auto& tp : plan.forget) req.forgotten.push_back({tp.topic, {}, tp.partition});
    const auto ctx = leader.begin(req, now);
    ASSERT_EQ(ctx.error, ErrorCode::none) << "round " << round;
    incremental += ctx.incremental ? 1 : 0;

    // The leader reads what the follower wants, no more, no less.
    std::map<int32_t, int64_t> reading;
    for (const auto& sp : ctx.partitions) reading[sp.key.partition] = sp.fetch_offset;
    ASSERT_EQ(reading, offsets) << "round " << round;

    if (rng() % 20 == 0) {  // the answer is lost
      follower.failed(ErrorCode::network_exception);
      continue;
    }
    std::vector<kafka::PartitionAnswer> answers;
    for (const auto& sp : ctx.partitions) {
      kafka::PartitionAnswer a;
      a.high_watermark = leader_hw[sp.key.partition];
      a.last_stable_offset = a.high_watermark;
      a.log_start_offset = 0;
      answers.push_back(a);
    }
    const auto include = leader.finish(ctx, answers, now);
    follower.answered(plan, ctx.session_id);
    for (size_t i = 0; i < ctx.partitions.size(); ++i)
      if (include[i]) follower.answered_partition({"t", ctx.partitions[i].key.partition}, answers[i].high_watermark, 0);
    for (const auto& [p, _] : offsets) {
      const auto last = follower.last_answer({"t", p});
      ASSERT_TRUE(last) << "round " << round << " partition " << p;
      ASSERT_EQ(last->high_watermark, leader_hw[p]) << "round " << round << " partition " << p;
    }
  }
  EXPECT_GT(incremental, 1500u);
}

}  // namespace
}  // namespace brokerd::fetcher
