// Partition reassignment as the controller decides it: widen, wait for the ISR, complete;
// replace, cancel, refuse.
#include "brokerd/metadata/partition_reassignment.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace brokerd::metadata;
using brokerd::protocol::ErrorCode;
using Ids = std::vector<int32_t>;

MetadataImage brokers(Ids live, Ids fenced = {}) {
  MetadataImage image;
  for (int32_t id : live) {
    BrokerInfo b;
    b.node_id = id;
    b.fenced = false;
    image.brokers.push_back(b);
  }
  for (int32_t id : fenced) {
    BrokerInfo b;
    b.node_id = id;
    b.fenced = true;
    image.brokers.push_back(b);
  }
  std::sort(image.brokers.begin(), image.brokers.end(), [](auto& a, auto& b) { return a.node_id < b.node_id; });
  return image;
}

PartitionAssignment part(Ids replicas, Ids isr, int32_t leader) {
  PartitionAssignment a;
  a.replicas = std::move(replicas);
  a.isr = std::move(isr);
  a.leader = leader;
  return a;
}

TEST(PartitionReassignment, WidensTheReplicasUntilTheNewOnesAreInSync) {
  auto image = brokers({1, 2, 3, 4});
  auto r = reassign(part({1, 2, 3}, {1, 2, 3}, 1), Ids{4, 2, 3}, image);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.next.replicas, (Ids{4, 2, 3, 1}));
  EXPECT_EQ(r.next.adding, Ids{4});
  EXPECT_EQ(r.next.removing, Ids{1});
  EXPECT_EQ(r.next.leader, 1) << "the leader stays until the new replica has caught up";
  EXPECT_EQ(target_replicas(r.next), (Ids{4, 2, 3}));
  EXPECT_EQ(original_replicas(r.next), (Ids{2, 3, 1}));
  EXPECT_FALSE(complete_reassignment(r.next, image)) << "4 is not in sync yet";

  auto caught_up = r.next;
  caught_up.isr = {4, 2, 3, 1};
  auto done = complete_reassignment(caught_up, image);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->replicas, (Ids{4, 2, 3}));
  EXPECT_EQ(done->isr, (Ids{4, 2, 3}));
  EXPECT_TRUE(done->adding.empty() && done->removing.empty());
  EXPECT_EQ(done->leader, 4) << "the leader left: the first in-sync target replica leads";
  auto change = change_between(caught_up, *done);
  EXPECT_EQ(*change.replicas, (Ids{4, 2, 3}));
  EXPECT_EQ(*change.leader, 4);
  EXPECT_EQ(*change.adding, Ids{});
}

TEST(PartitionReassignment, ATargetAlreadyInSyncCompletesAtOnce) {
  auto image = brokers({1, 2, 3});
  auto r = reassign(part({1, 2, 3}, {1, 2, 3}, 1), Ids{3, 2}, image);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_EQ(r.next.replicas, (Ids{3, 2}));
  EXPECT_EQ(r.next.isr, (Ids{2, 3}));
  EXPECT_FALSE(r.next.reassigning());
  EXPECT_EQ(r.next.leader, 3);
  // Reordering only (a new preferred leader) keeps the leader.
  auto reorder = reassign(part({1, 2, 3}, {1, 2, 3}, 1), Ids{2, 1, 3}, image);
  EXPECT_EQ(reorder.next.replicas, (Ids{2, 1, 3}));
  EXPECT_EQ(reorder.next.leader, 1);
}

TEST(PartitionReassignment, ANewTargetReplacesTheOneInProgressAndCancelGoesBack) {
  auto image = brokers({1, 2, 3, 4, 5});
  auto first = reassign(part({1, 2, 3}, {1, 2, 3}, 1), Ids{4, 2, 3}, image).next;
  auto second = reassign(first, Ids{5, 2, 3}, image);
  ASSERT_EQ(second.error, ErrorCode::none);
  EXPECT_EQ(second.next.replicas, (Ids{5, 2, 3, 1})) << "4 is dropped; the original replicas still count";
  EXPECT_EQ(second.next.adding, Ids{5});
  EXPECT_EQ(second.next.removing, Ids{1});

  auto back = reassign(second.next, std::nullopt, image);
  ASSERT_EQ(back.error, ErrorCode::none);
  EXPECT_EQ(back.next.replicas, (Ids{2, 3, 1}));
  EXPECT_FALSE(back.next.reassigning());
  EXPECT_EQ(back.next.leader, 1);
  EXPECT_EQ(reassign(back.next, std::nullopt, image).error, ErrorCode::no_reassignment_in_progress);
}

TEST(PartitionReassignment, RefusesBadTargets) {
  auto image = brokers({1, 2, 3});
  auto a = part({1, 2}, {1, 2}, 1);
  EXPECT_EQ(reassign(a, Ids{}, image).error, ErrorCode::invalid_replica_assignment);
  EXPECT_EQ(reassign(a, Ids{1, 1}, image).error, ErrorCode::invalid_replica_assignment);
  EXPECT_EQ(reassign(a, Ids{1, 9}, image).error, ErrorCode::invalid_replica_assignment);
  EXPECT_EQ(reassign(a, Ids{1, 2, 3}, image, false).error, ErrorCode::invalid_replication_factor);
  EXPECT_EQ(reassign(a, Ids{3, 2}, image, false).error, ErrorCode::none);
}

TEST(PartitionReassignment, NeverElectsAFencedBroker) {
  auto image = brokers({2, 4}, {3});
  auto a = part({4, 3, 2, 1}, {4, 3, 2, 1}, 1);
  a.adding = {4};
  a.removing = {1};
  auto done = complete_reassignment(a, image);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->leader, 4);
  a.replicas = {3, 2, 1};
  a.isr = {3, 2, 1};
  a.adding = {};
  a.removing = {1};
  done = complete_reassignment(a, image);
  ASSERT_TRUE(done);
  EXPECT_EQ(done->leader, 2) << "3 is fenced";
}

}  // namespace
