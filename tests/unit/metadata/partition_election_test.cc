#include "brokerd/metadata/partition_election.h"

#include <gtest/gtest.h>

#include <memory>

namespace {

using namespace brokerd::metadata;

MetadataImage image_with(std::vector<PartitionAssignment> parts, std::vector<int32_t> live) {
  MetadataImage image;
  for (int32_t id : {1, 2, 3}) {
    BrokerInfo b;
    b.node_id = id;
    b.fenced = std::find(live.begin(), live.end(), id) == live.end();
    image.brokers.push_back(b);
  }
  auto t = std::make_shared<TopicMetadata>();
  t->name = "t";
  t->id = brokerd::protocol::Uuid::random();
  t->partitions = std::move(parts);
  image.put_topic(t);
  return image;
}

PartitionAssignment part(std::vector<int32_t> replicas, std::vector<int32_t> isr, int32_t leader) {
  PartitionAssignment a;
  a.replicas = std::move(replicas);
  a.isr = std::move(isr);
  a.leader = leader;
  return a;
}

TEST(PartitionElection, FencedLeaderIsReplacedByALiveInSyncReplica) {
  auto image = image_with({part({1, 2, 3}, {1, 2, 3}, 1), part({2, 1, 3}, {2, 3}, 2), part({3, 1}, {3, 1}, 3)}, {1, 2, 3});
  auto updates = elect_on_fence(image, 1, 1);
  ASSERT_EQ(updates.size(), 2u);  // partition 1 does not involve broker 1
  EXPECT_EQ(updates[0].partition, 0);
  EXPECT_EQ(*updates[0].change.leader, 2);
  EXPECT_EQ(*updates[0].change.isr, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(updates[1].partition, 2);
  EXPECT_FALSE(updates[1].change.leader) << "broker 3 keeps leading";
  EXPECT_EQ(*updates[1].change.isr, std::vector<int32_t>{3});
}

TEST(PartitionElection, NeverElectsOutsideTheIsrOrAFencedBroker) {
  // Broker 3 is in the ISR but fenced; broker 2 is live but not in the ISR.
  auto image = image_with({part({1, 2, 3}, {1, 3}, 1)}, {1, 2});
  auto updates = elect_on_fence(image, 1, 1);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(*updates[0].change.leader, -1);
  EXPECT_EQ(*updates[0].change.isr, std::vector<int32_t>{3});
}

TEST(PartitionElection, LastInSyncReplicaStaysAndLeadsAgainWhenBack) {
  auto image = image_with({part({1}, {1}, 1), part({2}, {2}, 2)}, {1, 2, 3});
  auto fenced = elect_on_fence(image, 1, 1);
  ASSERT_EQ(fenced.size(), 1u);
  EXPECT_EQ(*fenced[0].change.leader, -1);
  EXPECT_FALSE(fenced[0].change.isr) << "the last member stays in the ISR";
  auto after = image_with({part({1}, {1}, -1), part({2}, {2}, 2)}, {2, 3});
  auto back = elect_on_unfence(after, 1, 1);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].partition, 0);
  EXPECT_EQ(*back[0].change.leader, 1);
  EXPECT_TRUE(elect_on_unfence(after, 3, 1).empty());
}

MetadataImage applied(MetadataImage image, const std::vector<PartitionUpdate>& updates) {
  auto t = std::make_shared<TopicMetadata>(*image.topic("t"));
  for (const auto& u : updates) {
    auto& a = t->partitions[static_cast<size_t>(u.partition)];
    if (u.change.isr) a.isr = *u.change.isr;
    if (u.change.elr) a.elr = *u.change.elr;
    if (u.change.leader) {
      a.leader = *u.change.leader;
      ++a.leader_epoch;
    }
  }
  image.put_topic(t);
  return image;
}

void set_live(MetadataImage& image, std::vector<int32_t> live) {
  for (auto& b : image.brokers) b.fenced = std::find(live.begin(), live.end(), b.node_id) == live.end();
}

TEST(PartitionElection, EligibleReplicasLeadWhenTheLastInSyncReplicaLostItsData) {
  // min.insync.replicas 2: the ISR {1, 2} loses 1, which stays eligible (ELR).
  auto image = image_with({part({1, 2, 3}, {1, 2}, 1)}, {1, 2, 3});
  image = applied(image, elect_on_fence(image, 1, 2));
  set_live(image, {2, 3});
  const auto* p = &image.topic("t")->partitions[0];
  EXPECT_EQ(p->leader, 2);
  EXPECT_EQ(p->isr, std::vector<int32_t>{2});
  EXPECT_EQ(p->elr, std::vector<int32_t>{1});
  // 2, the last in sync, dies: no leader (1 is down too).
  image = applied(image, elect_on_fence(image, 2, 2));
  set_live(image, {3});
  EXPECT_EQ(image.topic("t")->partitions[0].leader, -1);
  // 2 comes back after an unclean stop: it may have lost what it alone had committed, and
  // 1 still holds it, so 2 is no longer eligible.
  image = applied(image, elect_on_unclean_restart(image, 2, 2));
  p = &image.topic("t")->partitions[0];
  EXPECT_TRUE(p->isr.empty());
  EXPECT_EQ(p->elr, std::vector<int32_t>{1});
  // 1 returns and leads.
  auto back = elect_on_unfence(image, 1, 2);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(*back[0].change.leader, 1);
  EXPECT_EQ(*back[0].change.isr, std::vector<int32_t>{1});
}

}  // namespace

namespace {

TEST(PartitionElection, PreferredElectionsOfNamedPartitionsAnswerEachOne) {
  // 0: led by its second replica, preferred back; 1: already preferred; 2: preferred out of
  // the ISR.
  auto image = image_with({part({1, 2, 3}, {1, 2, 3}, 2), part({2, 1}, {2, 1}, 2), part({3, 1}, {1}, 1)}, {1, 2, 3});
  std::vector<ElectionTarget> targets{{"t", 0}, {"t", 1}, {"t", 2}, {"t", 7}, {"gone", 0}};
  auto e = elect_leaders(image, targets, ElectionType::preferred);
  ASSERT_EQ(e.updates.size(), 1u);
  EXPECT_EQ(e.updates[0].partition, 0);
  EXPECT_EQ(*e.updates[0].change.leader, 1);
  ASSERT_EQ(e.results.size(), 5u);
  EXPECT_EQ(e.results[0].error, brokerd::protocol::ErrorCode::none);
  EXPECT_EQ(e.results[1].error, brokerd::protocol::ErrorCode::election_not_needed);
  EXPECT_EQ(e.results[2].error, brokerd::protocol::ErrorCode::preferred_leader_not_available);
  EXPECT_EQ(e.results[3].error, brokerd::protocol::ErrorCode::unknown_topic_or_partition);
  EXPECT_EQ(e.results[4].error, brokerd::protocol::ErrorCode::unknown_topic_or_partition);
}

TEST(PartitionElection, ElectionsOfEveryPartitionLeaveOutThoseThatNeedNone) {
  auto image = image_with({part({1, 2, 3}, {1, 2, 3}, 2), part({2, 1}, {2, 1}, 2)}, {1, 2, 3});
  auto e = elect_leaders(image, std::nullopt, ElectionType::preferred);
  ASSERT_EQ(e.results.size(), 1u);
  EXPECT_EQ(e.results[0].partition, 0);
}

TEST(PartitionElection, UncleanElectionGivesAnOfflinePartitionAnyLiveReplica) {
  auto image = image_with({part({1, 2, 3}, {1}, -1)}, {2, 3});
  auto e = elect_leaders(image, std::vector<ElectionTarget>{{"t", 0}}, ElectionType::unclean);
  ASSERT_EQ(e.updates.size(), 1u);
  EXPECT_EQ(*e.updates[0].change.leader, 2);
  EXPECT_EQ(*e.updates[0].change.isr, (std::vector<int32_t>{2}));
}

TEST(PartitionElection, RebalanceMovesLeadersBackOnlyPastTheImbalanceThreshold) {
  // Broker 1 is preferred for 4 partitions and leads 3 (25% imbalance); broker 2 for 1 it leads.
  auto image = image_with({part({1, 2}, {1, 2}, 1), part({1, 2}, {1, 2}, 1), part({1, 2}, {1, 2}, 1),
                           part({1, 2}, {1, 2}, 2), part({2, 1}, {2, 1}, 2)},
                          {1, 2, 3});
  EXPECT_TRUE(rebalance_leaders(image, 25).empty());
  auto moved = rebalance_leaders(image, 10);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0].partition, 3);
  EXPECT_EQ(*moved[0].change.leader, 1);
  // A fenced preferred broker gets nothing back.
  auto fenced = image_with({part({1, 2}, {1, 2}, 2)}, {2, 3});
  EXPECT_TRUE(rebalance_leaders(fenced, 10).empty());
}

}  // namespace
