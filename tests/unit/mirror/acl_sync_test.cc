#include "mirror/acl_sync.h"

#include <gtest/gtest.h>

namespace brokerd::mirror {
namespace {

acl::Binding binding(acl::ResourceType type, std::string name, acl::PatternType pattern) {
  acl::Binding b;
  b.resource_type = type;
  b.resource_name = std::move(name);
  b.pattern_type = pattern;
  b.principal = "User:alice";
  b.host = "*";
  b.operation = acl::Operation::read;
  b.permission = acl::Permission::allow;
  return b;
}

TEST(AclSync, CopiesOnlyWhatTheLinkMirrors) {
  metadata::MirrorLink link;
  link.topics = {"orders"};
  link.topic_prefixes = {"team-a."};
  link.exclude_topics = {"team-a.private"};
  link.groups = {"billing"};
  link.group_prefixes = {"etl-"};
  using acl::PatternType;
  using acl::ResourceType;
  EXPECT_TRUE(copies_acl(link, binding(ResourceType::topic, "orders", PatternType::literal)));
  EXPECT_TRUE(copies_acl(link, binding(ResourceType::topic, "team-a.web", PatternType::literal)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::topic, "team-a.private", PatternType::literal)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::topic, "payments", PatternType::literal)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::topic, "*", PatternType::literal)));
  // A prefix is copied only when everything it can match is mirrored.
  EXPECT_TRUE(copies_acl(link, binding(ResourceType::topic, "team-a.web-", PatternType::prefixed)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::topic, "team-a.", PatternType::prefixed)));  // covers the exclusion
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::topic, "team-", PatternType::prefixed)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::topic, "ord", PatternType::prefixed)));
  EXPECT_TRUE(copies_acl(link, binding(ResourceType::group, "billing", PatternType::literal)));
  EXPECT_TRUE(copies_acl(link, binding(ResourceType::group, "etl-nightly", PatternType::prefixed)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::group, "web", PatternType::literal)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::cluster, "kafka-cluster", PatternType::literal)));
  EXPECT_FALSE(copies_acl(link, binding(ResourceType::transactional_id, "orders", PatternType::literal)));
  link.all_groups = true;
  EXPECT_TRUE(copies_acl(link, binding(ResourceType::group, "*", PatternType::literal)));
}

TEST(AclSync, ACopysIdDependsOnTheLinkAndTheBindingOnly) {
  const auto link = protocol::Uuid::random();
  const auto b = binding(acl::ResourceType::topic, "orders", acl::PatternType::literal);
  auto other = b;
  other.operation = acl::Operation::write;
  auto with_id = b;
  with_id.id = protocol::Uuid::random();
  EXPECT_EQ(copy_id(link, b), copy_id(link, with_id));
  EXPECT_NE(copy_id(link, b), copy_id(link, other));
  EXPECT_NE(copy_id(link, b), copy_id(protocol::Uuid::random(), b));
  EXPECT_FALSE(copy_id(link, b).is_zero());
}

}  // namespace
}  // namespace brokerd::mirror
