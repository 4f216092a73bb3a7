#include "brokerd/cluster/partition_election.h"

#include <gtest/gtest.h>

#include <memory>

namespace {

using namespace brokerd::cluster;

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
  auto updates = elect_on_fence(image, 1);
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
  auto updates = elect_on_fence(image, 1);
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(*updates[0].change.leader, -1);
  EXPECT_EQ(*updates[0].change.isr, std::vector<int32_t>{3});
}

TEST(PartitionElection, LastInSyncReplicaStaysAndLeadsAgainWhenBack) {
  auto image = image_with({part({1}, {1}, 1), part({2}, {2}, 2)}, {1, 2, 3});
  auto fenced = elect_on_fence(image, 1);
  ASSERT_EQ(fenced.size(), 1u);
  EXPECT_EQ(*fenced[0].change.leader, -1);
  EXPECT_FALSE(fenced[0].change.isr) << "the last member stays in the ISR";
  auto after = image_with({part({1}, {1}, -1), part({2}, {2}, 2)}, {2, 3});
  auto back = elect_on_unfence(after, 1);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].partition, 0);
  EXPECT_EQ(*back[0].change.leader, 1);
  EXPECT_TRUE(elect_on_unfence(after, 3).empty());
}

}  // namespace
