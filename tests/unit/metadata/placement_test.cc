#include "brokerd/metadata/placement.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace {

using brokerd::metadata::place_replicas;
using brokerd::metadata::PlacementBroker;

std::vector<PlacementBroker> zones(int per_zone, int zone_count) {
  std::vector<PlacementBroker> out;
  for (int z = 0; z < zone_count; ++z)
    for (int i = 0; i < per_zone; ++i) out.push_back({z * per_zone + i + 1, "zone-" + std::string(1, char('a' + z))});
  return out;
}

std::string rack_of(const std::vector<PlacementBroker>& brokers, int32_t id) {
  for (const auto& b : brokers)
    if (b.id == id) return b.rack;
  return "?";
}

TEST(Placement, ReplicasOnDistinctRacksAndDistinctBrokers) {
  auto brokers = zones(3, 3);  // 9 brokers in 3 zones
  for (uint32_t start : {0u, 5u, 1000u}) {
    auto plan = place_replicas(brokers, 60, 3, start);
    ASSERT_EQ(plan.size(), 60u);
    for (const auto& replicas : plan) {
      ASSERT_EQ(replicas.size(), 3u);
      std::set<int32_t> ids(replicas.begin(), replicas.end());
      std::set<std::string> racks;
      for (int32_t r : replicas) racks.insert(rack_of(brokers, r));
      EXPECT_EQ(ids.size(), 3u);
      EXPECT_EQ(racks.size(), 3u);
    }
  }
}

TEST(Placement, LeadersAndReplicasSpreadEvenly) {
  auto brokers = zones(2, 3);  // 6 brokers
  auto plan = place_replicas(brokers, 600, 3, 7);
  std::map<int32_t, int> leaders, replicas;
  for (const auto& r : plan) {
    ++leaders[r[0]];
    for (int32_t b : r) ++replicas[b];
  }
  ASSERT_EQ(leaders.size(), 6u);
  for (const auto& [b, n] : leaders) EXPECT_EQ(n, 100) << "broker " << b;
  for (const auto& [b, n] : replicas) EXPECT_NEAR(n, 300, 30) << "broker " << b;
}

TEST(Placement, MoreReplicasThanRacksStillUsesEveryRackFirst) {
  std::vector<PlacementBroker> brokers{{1, "a"}, {2, "a"}, {3, "a"}, {4, "b"}};
  for (const auto& r : place_replicas(brokers, 8, 4, 0)) {
    std::set<int32_t> ids(r.begin(), r.end());
    EXPECT_EQ(ids.size(), 4u);
  }
  for (const auto& r : place_replicas(brokers, 8, 2, 0)) EXPECT_NE(rack_of(brokers, r[0]), rack_of(brokers, r[1]));
}

TEST(Placement, BrokersWithoutRackAndOneBroker) {
  std::vector<PlacementBroker> brokers{{3, ""}, {1, ""}, {2, ""}};
  auto plan = place_replicas(brokers, 3, 3, 0);
  for (const auto& r : plan) EXPECT_EQ(std::set<int32_t>(r.begin(), r.end()).size(), 3u);
  auto single = place_replicas({{7, ""}}, 4, 1, 123);
  for (const auto& r : single) EXPECT_EQ(r, std::vector<int32_t>{7});
  EXPECT_TRUE(place_replicas({}, 4, 1, 0).empty());
}

}  // namespace
