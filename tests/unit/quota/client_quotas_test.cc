#include "brokerd/quota/client_quotas.h"

#include <gtest/gtest.h>

namespace {

using namespace brokerd::quota;
const std::optional<std::string> kDefault;

Entity user(std::optional<std::string> u) { return {{"user", u}}; }
Entity client(std::optional<std::string> c) { return {{"client-id", c}}; }
Entity both(std::optional<std::string> u, std::optional<std::string> c) { return normalized({{"user", u}, {"client-id", c}}); }

TEST(ClientQuotas, KafkasPrecedenceFromTheMostSpecific) {
  QuotaSet q;
  const std::string k(kProducerByteRate);
  q[client(kDefault)][k] = 8;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 8);
  EXPECT_EQ(applicable(q, k, "alice", "app")->bucket, "producer_byte_rate:client-id=app");
  q[client("app")][k] = 7;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 7);
  q[user(kDefault)][k] = 6;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 6);
  EXPECT_EQ(applicable(q, k, "alice", "app")->bucket, "producer_byte_rate:user=alice");  // each user its own
  q[both(kDefault, kDefault)][k] = 5;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 5);
  q[both(kDefault, "app")][k] = 4;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 4);
  q[user("alice")][k] = 3;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 3);
  EXPECT_EQ(applicable(q, k, "alice", "other-app")->bucket, "producer_byte_rate:user=alice");  // shared by her clients
  q[both("alice", kDefault)][k] = 2;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 2);
  q[both("alice", "app")][k] = 1;
  EXPECT_EQ(applicable(q, k, "alice", "app")->value, 1);
  EXPECT_EQ(applicable(q, k, "bob", "app")->value, 4);  // bob falls under the default user + app
  EXPECT_FALSE(applicable(q, kConsumerByteRate, "alice", "app"));
}

TEST(ClientQuotas, LookupsWithoutBuildingAnEntityFindExactlyTheirOwn) {
  // Names that are prefixes of each other, empty names and defaults sort apart.
  QuotaSet q;
  const std::string k(kProducerByteRate);
  q[user("al")][k] = 1;
  q[user("alice")][k] = 2;
  q[user("")][k] = 3;
  q[both("alice", "")][k] = 4;
  q[client("al")][k] = 5;
  EXPECT_EQ(applicable(q, k, "alice", "x")->value, 2);
  EXPECT_EQ(applicable(q, k, "al", "x")->value, 1);
  EXPECT_EQ(applicable(q, k, "", "x")->value, 3);
  EXPECT_EQ(applicable(q, k, "alice", "")->value, 4);
  EXPECT_EQ(applicable(q, k, "bob", "al")->value, 5);
  EXPECT_FALSE(applicable(q, k, "bob", "alice"));
}

TEST(ClientQuotas, ChecksRefuseWhatIsNotEnforced) {
  EXPECT_EQ(check_entity(user("a")), "");
  EXPECT_EQ(check_entity(both("a", kDefault)), "");
  EXPECT_NE(check_entity({}), "");
  EXPECT_NE(check_entity({{"ip", "10.0.0.1"}}), "");
  EXPECT_NE(check_entity({{"user", "a"}, {"user", "b"}}), "");
  EXPECT_NE(check_entity({{"group", "a"}}), "");
  EXPECT_EQ(check_op("producer_byte_rate", 1024, false), "");
  EXPECT_EQ(check_op("consumer_byte_rate", 0, true), "");
  EXPECT_NE(check_op("consumer_byte_rate", 0, false), "");
  EXPECT_EQ(check_op("request_percentage", 0.5, false), "");
  EXPECT_NE(check_op("request_percentage", -1, false), "");
  EXPECT_NE(check_op("connection_creation_rate", 5, false), "");
  EXPECT_NE(check_op("no_such_quota", 5, false), "");
}

TEST(ClientQuotas, FiltersMatchAsDescribeClientQuotasAsks) {
  const Entity alice = user("alice"), alice_app = both("alice", "app"), any_user = user(kDefault);
  const std::vector<FilterComponent> exact{{"user", kMatchExact, "alice"}};
  EXPECT_TRUE(matches(alice, exact, false));
  EXPECT_TRUE(matches(alice_app, exact, false));
  EXPECT_FALSE(matches(alice_app, exact, true));
  EXPECT_FALSE(matches(any_user, exact, false));
  const std::vector<FilterComponent> defaults{{"user", kMatchDefault, std::nullopt}};
  EXPECT_TRUE(matches(any_user, defaults, true));
  EXPECT_FALSE(matches(alice, defaults, false));
  const std::vector<FilterComponent> any{{"user", kMatchAny, std::nullopt}};
  EXPECT_TRUE(matches(alice, any, true) && matches(any_user, any, true));
  EXPECT_FALSE(matches(client("app"), any, false));
  EXPECT_TRUE(matches(client("app"), {}, false));  // no component: everything
  EXPECT_NE(check_filter({{"user", kMatchAny, std::nullopt}, {"user", kMatchExact, "a"}}), "");
  EXPECT_NE(check_filter({{"user", 7, std::nullopt}}), "");
  EXPECT_EQ(check_filter(exact), "");
}

}  // namespace
