// The controller's rules: elections from the ISR, then the ELR, AlterPartition validation.
#include <gtest/gtest.h>

#include "brokerd/replication/partition_state.h"
#include "memory_log.h"

namespace brokerd::replication {
namespace {

using testing::partition;

BrokerLiveness live(std::vector<BrokerId> b) { return BrokerLiveness{std::move(b)}; }

TEST(ControllerRules, ElectsTheFirstLiveIsrMemberAndBumpsTheEpoch) {
  auto s = partition(1, 4, {1, 2, 3});
  auto next = on_broker_fenced(s, 1, live({2, 3}), 2, false);
  EXPECT_EQ(next.leader, 2);
  EXPECT_EQ(next.leader_epoch, 5);
  EXPECT_EQ(next.isr, (std::vector<BrokerId>{2, 3}));
  EXPECT_GT(next.partition_epoch, s.partition_epoch);
}

TEST(ControllerRules, NeverElectsOutsideTheIsrUnlessUncleanIsAllowed) {
  auto s = partition(1, 4, {1});
  auto next = on_broker_fenced(s, 1, live({2, 3}), 1, false);
  EXPECT_EQ(next.leader, kNoBroker);  // offline
  EXPECT_EQ(next.isr, (std::vector<BrokerId>{1}));  // the last member stays
  auto unclean = on_broker_fenced(s, 1, live({2, 3}), 1, true);
  EXPECT_EQ(unclean.leader, 2);
  EXPECT_EQ(unclean.isr, (std::vector<BrokerId>{2}));
}

TEST(ControllerRules, ShrinkingBelowMinIsrKeepsTheRemovedEligible) {
  auto s = partition(1, 4, {1, 2, 3});
  auto r = apply_alter_partition(s, {1, 4, 0, {1, 2}}, live({1, 2, 3}), 2);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_TRUE(r.state.elr.empty());  // still at min ISR: 3 is simply out
  auto r2 = apply_alter_partition(r.state, {1, 4, r.state.partition_epoch, {1}}, live({1, 2, 3}), 2);
  ASSERT_EQ(r2.error, ErrorCode::none);
  EXPECT_EQ(r2.state.elr, (std::vector<BrokerId>{2}));
  // The leader dies: 2 holds everything committed (nothing was since the ISR fell below 2).
  auto next = on_broker_fenced(r2.state, 1, live({2, 3}), 2, false);
  EXPECT_EQ(next.leader, 2);
  EXPECT_EQ(next.isr, (std::vector<BrokerId>{2}));
  EXPECT_EQ(next.elr, (std::vector<BrokerId>{1}));
}

TEST(ControllerRules, TheElrEmptiesOnceTheIsrIsBackAtMinIsr) {
  auto s = partition(1, 4, {1});
  s.elr = {2};
  auto r = apply_alter_partition(s, {1, 4, 0, {1, 3}}, live({1, 2, 3}), 2);
  ASSERT_EQ(r.error, ErrorCode::none);
  EXPECT_TRUE(r.state.elr.empty());
}

TEST(ControllerRules, AnUncleanRestartLeavesIsrAndElr) {
  auto s = partition(1, 4, {1, 2});
  s.elr = {3};
  auto next = on_broker_unclean_restart(s, 3, live({1, 2}), 2, false);
  EXPECT_TRUE(next.elr.empty());
  auto last = partition(1, 4, {1});
  last.elr = {2};
  auto leader_gone = on_broker_unclean_restart(last, 1, live({2, 3}), 2, false);
  EXPECT_EQ(leader_gone.leader, 2) << "the eligible replica leads, not the one that lost data";
  EXPECT_EQ(leader_gone.isr, std::vector<BrokerId>{2});
  // With nobody else eligible, the restarted replica is all there is: it stays.
  auto alone = on_broker_unclean_restart(partition(1, 4, {1}), 1, live({2, 3}), 2, false);
  EXPECT_EQ(alone.isr, std::vector<BrokerId>{1});
}

TEST(ControllerRules, AlterPartitionChecksTheSenderAndTheVersion) {
  auto s = partition(1, 4, {1, 2}, {1, 2, 3}, 7);
  const auto all = live({1, 2, 3});
  EXPECT_EQ(apply_alter_partition(s, {2, 4, 7, {1, 2}}, all, 2).error, ErrorCode::not_leader_or_follower);
  EXPECT_EQ(apply_alter_partition(s, {1, 3, 7, {1, 2}}, all, 2).error, ErrorCode::fenced_leader_epoch);
  EXPECT_EQ(apply_alter_partition(s, {1, 5, 7, {1, 2}}, all, 2).error, ErrorCode::unknown_leader_epoch);
  EXPECT_EQ(apply_alter_partition(s, {1, 4, 6, {1, 2, 3}}, all, 2).error, ErrorCode::invalid_update_version);
  EXPECT_EQ(apply_alter_partition(s, {1, 4, 7, {2, 3}}, all, 2).error, ErrorCode::invalid_request);
  EXPECT_EQ(apply_alter_partition(s, {1, 4, 7, {1, 4}}, all, 2).error, ErrorCode::invalid_replica_assignment);
  EXPECT_EQ(apply_alter_partition(s, {1, 4, 7, {1, 2, 3}}, live({1, 2}), 2).error, ErrorCode::ineligible_replica);
  auto ok = apply_alter_partition(s, {1, 4, 7, {3, 1, 2}}, all, 2);
  EXPECT_EQ(ok.error, ErrorCode::none);
  EXPECT_EQ(ok.state.isr, (std::vector<BrokerId>{1, 2, 3}));  // replica order
  EXPECT_EQ(ok.state.partition_epoch, 8);
}

TEST(ControllerRules, AMemberFoundInSyncByAnEarlierProcessOfItsBrokerIsRefused) {
  // KIP-903: broker 3 was found in sync while it held epoch 10; it has since restarted (12).
  auto s = partition(1, 4, {1, 2}, {1, 2, 3}, 7);
  auto brokers = live({1, 2, 3});
  brokers.epochs = {{1, 5}, {2, 6}, {3, 12}};
  AlterPartitionRequest stale{1, 4, 7, {1, 2, 3}, {kNoBrokerEpoch, 6, 10}};
  EXPECT_EQ(apply_alter_partition(s, stale, brokers, 2).error, ErrorCode::ineligible_replica);
  AlterPartitionRequest current{1, 4, 7, {1, 2, 3}, {kNoBrokerEpoch, 6, 12}};
  EXPECT_EQ(apply_alter_partition(s, current, brokers, 2).error, ErrorCode::none);
  AlterPartitionRequest unknown{1, 4, 7, {1, 2, 3}, {}};  // an older leader names no epochs
  EXPECT_EQ(apply_alter_partition(s, unknown, brokers, 2).error, ErrorCode::none);
  // Members already in the ISR are not checked again (the controller removed any that restarted).
  AlterPartitionRequest shrink{1, 4, 7, {1, 2}, {kNoBrokerEpoch, 99}};
  EXPECT_EQ(apply_alter_partition(s, shrink, brokers, 2).error, ErrorCode::none);
}

TEST(ControllerRules, AnOfflinePartitionGetsALeaderWhenAnEligibleBrokerReturns) {
  auto s = partition(kNoBroker, 5, {2});
  EXPECT_EQ(on_broker_unfenced(s, live({1, 3}), false).leader, kNoBroker);
  auto back = on_broker_unfenced(s, live({1, 2, 3}), false);
  EXPECT_EQ(back.leader, 2);
  EXPECT_EQ(back.leader_epoch, 6);
}

TEST(ControllerRules, APreferredElectionGivesTheLeadBackToTheFirstReplica) {
  auto s = partition(2, 5, {1, 2, 3});  // replicas 1, 2, 3: 1 is preferred
  auto back = elect_preferred(s, live({1, 2, 3}));
  ASSERT_EQ(back.error, ErrorCode::none);
  EXPECT_EQ(back.next.leader, 1);
  EXPECT_EQ(back.next.leader_epoch, 6);
  EXPECT_EQ(back.next.isr, s.isr);
  EXPECT_EQ(elect_preferred(back.next, live({1, 2, 3})).error, ErrorCode::election_not_needed);
}

TEST(ControllerRules, APreferredReplicaOutOfTheIsrOrFencedIsNotElected) {
  auto out_of_isr = partition(2, 5, {2, 3});
  EXPECT_EQ(elect_preferred(out_of_isr, live({1, 2, 3})).error, ErrorCode::preferred_leader_not_available);
  EXPECT_EQ(elect_preferred(out_of_isr, live({1, 2, 3})).next.leader, 2);
  auto fenced = partition(2, 5, {1, 2, 3});
  EXPECT_EQ(elect_preferred(fenced, live({2, 3})).error, ErrorCode::preferred_leader_not_available);
}

TEST(ControllerRules, AnUncleanElectionOnlyWhenNoLiveLeaderAndThenAnyLiveReplica) {
  auto led = partition(2, 5, {2});
  EXPECT_EQ(elect_unclean(led, live({1, 2, 3})).error, ErrorCode::election_not_needed);
  auto offline = partition(kNoBroker, 5, {2});
  auto any = elect_unclean(offline, live({1, 3}));
  ASSERT_EQ(any.error, ErrorCode::none);
  EXPECT_EQ(any.next.leader, 1);
  EXPECT_EQ(any.next.isr, (std::vector<BrokerId>{1}));
  EXPECT_EQ(elect_unclean(offline, live({})).error, ErrorCode::eligible_leaders_not_available);
}

}  // namespace
}  // namespace brokerd::replication
