#include "brokerd/tenant/tenant_limits.h"

#include <gtest/gtest.h>

namespace brokerd::tenant {
namespace {

TEST(TenantLimitsTest, APrefixMatchesTheTeamAndALiteralOnlyItsPrincipal) {
  const Pattern team{"User:team-a-", kPrefixed};
  const Pattern alice{"User:alice", kLiteral};
  EXPECT_TRUE(matches(team, "User:team-a-orders"));
  EXPECT_FALSE(matches(team, "User:team-b-orders"));
  EXPECT_TRUE(matches(alice, "User:alice"));
  EXPECT_FALSE(matches(alice, "User:alice2"));
  EXPECT_EQ(to_string(team), "User:team-a-*");
}

TEST(TenantLimitsTest, ChecksRefuseUnknownKeysNegativeValuesAndBarePrincipals) {
  EXPECT_EQ(check_op(kMaxTopics, 10, false), "");
  EXPECT_EQ(check_op(kMaxPartitions, 0, false), "");
  EXPECT_NE(check_op("max.bytes", 10, false), "");
  EXPECT_NE(check_op(kMaxTopics, -1, false), "");
  EXPECT_EQ(check_op(kMaxTopics, -1, true), "");
  EXPECT_EQ(check_pattern({"User:alice", kLiteral}), "");
  EXPECT_EQ(check_pattern({"User:", kPrefixed}), "");
  EXPECT_NE(check_pattern({"alice", kLiteral}), "");
  EXPECT_NE(check_pattern({"User:", kLiteral}), "");
  EXPECT_NE(check_pattern({"User:a", 1}), "");
}

TEST(TenantLimitsTest, EveryMatchingLimitMustHold) {
  LimitSet limits;
  limits[{"User:team-a-", kPrefixed}] = {{"max.topics", 3}, {"max.partitions", 10}};
  limits[{"User:team-a-bot", kLiteral}] = {{"max.topics", 1}};
  auto usage = [](const Pattern& p) {
    return p.type == kPrefixed ? Usage{2, 8} : Usage{0, 0};
  };
  EXPECT_EQ(exceeded(limits, "User:team-a-web", 1, 2, usage), std::nullopt);
  auto topics = exceeded(limits, "User:team-a-web", 2, 2, usage);
  ASSERT_TRUE(topics);
  EXPECT_NE(topics->find("max.topics=3 for User:team-a-*"), std::string::npos) << *topics;
  auto partitions = exceeded(limits, "User:team-a-web", 1, 3, usage);
  ASSERT_TRUE(partitions);
  EXPECT_NE(partitions->find("max.partitions=10"), std::string::npos) << *partitions;
  auto bot = exceeded(limits, "User:team-a-bot", 1, 1, [](const Pattern& p) {
    return p.type == kPrefixed ? Usage{1, 1} : Usage{1, 1};
  });
  ASSERT_TRUE(bot);
  EXPECT_NE(bot->find("User:team-a-bot exceeded"), std::string::npos) << *bot;
  // Others are not limited; adding partitions only checks the partition limit.
  EXPECT_EQ(exceeded(limits, "User:team-b-web", 100, 1000, usage), std::nullopt);
  EXPECT_EQ(exceeded(limits, "User:team-a-web", 0, 2, [](const Pattern&) { return Usage{3, 8}; }), std::nullopt);
}

}  // namespace
}  // namespace brokerd::tenant
