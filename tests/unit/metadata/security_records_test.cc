// SCRAM credentials and ACL bindings as metadata records: their replay into an image, the
// ACL index rebuilt when an image is sealed, and both kept by a snapshot.
#include <gtest/gtest.h>

#include "metadata/metadata_records.h"

namespace brokerd::metadata {
namespace {

void replay(const std::vector<Bytes>& records, MetadataImage& image) {
  const std::string change = encode_change(records);
  apply_change(std::as_bytes(std::span<const char>(change.data(), change.size())), image);
  image.seal();
}

acl::Binding binding(std::string topic, std::string principal, acl::Operation op, acl::Permission perm) {
  acl::Binding b;
  b.id = protocol::Uuid::random();
  b.resource_type = acl::ResourceType::topic;
  b.resource_name = std::move(topic);
  b.principal = std::move(principal);
  b.host = "*";
  b.operation = op;
  b.permission = perm;
  return b;
}

TEST(SecurityRecords, AclsReplayIntoAnIndexAndSurviveASnapshot) {
  MetadataImage image;
  const acl::AuthorizerConfig rules;
  const auto allow = binding("orders", "User:alice", acl::Operation::write, acl::Permission::allow);
  const auto deny = binding("orders", "User:bob", acl::Operation::write, acl::Permission::deny);
  replay({acl_record(allow), acl_record(deny)}, image);
  ASSERT_EQ(image.acls->bindings.size(), 2u);
  ASSERT_TRUE(image.acls->index);
  EXPECT_TRUE(image.acls->index->authorize(rules, "User:alice", "1.2.3.4", acl::Operation::write,
                                           acl::ResourceType::topic, "orders"));
  EXPECT_FALSE(image.acls->index->authorize(rules, "User:bob", "1.2.3.4", acl::Operation::write,
                                            acl::ResourceType::topic, "orders"));

  // An image copied before a change keeps its bindings: the change copies, never shares.
  const MetadataImage before = image;
  replay({remove_acl_record(allow.id)}, image);
  EXPECT_EQ(image.acls->bindings.size(), 1u);
  EXPECT_EQ(before.acls->bindings.size(), 2u);
  EXPECT_FALSE(image.acls->index->authorize(rules, "User:alice", "1.2.3.4", acl::Operation::write,
                                            acl::ResourceType::topic, "orders"));
  EXPECT_TRUE(before.acls->index->authorize(rules, "User:alice", "1.2.3.4", acl::Operation::write,
                                            acl::ResourceType::topic, "orders"));

  MetadataImage restored;
  replay(image_records(image), restored);
  ASSERT_EQ(restored.acls->bindings.size(), 1u);
  EXPECT_EQ(restored.acls->bindings.begin()->second, deny);
  EXPECT_EQ(restored.acls->bindings.begin()->first, deny.id);
}

TEST(SecurityRecords, ScramCredentialsReplayAndSurviveASnapshot) {
  MetadataImage image;
  const auto c256 = auth::make_credential(auth::ScramMechanism::sha256, "pw", 4096);
  const auto c512 = auth::make_credential(auth::ScramMechanism::sha512, "pw", 8192);
  replay({scram_credential_record("alice", c256), scram_credential_record("alice", c512)}, image);
  auto got = image.scram_credential("alice", auth::ScramMechanism::sha512);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->stored_key, c512.stored_key);
  EXPECT_EQ(got->iterations, 8192);

  replay({remove_scram_credential_record("alice", auth::ScramMechanism::sha256)}, image);
  EXPECT_FALSE(image.scram_credential("alice", auth::ScramMechanism::sha256));
  MetadataImage restored;
  replay(image_records(image), restored);
  ASSERT_TRUE(restored.scram_credential("alice", auth::ScramMechanism::sha512));
  EXPECT_EQ(restored.scram_credential("alice", auth::ScramMechanism::sha512)->server_key, c512.server_key);
  EXPECT_FALSE(restored.scram_credential("alice", auth::ScramMechanism::sha256));
}

TEST(SecurityRecords, ImagesNeverShareCredentialsTheyChange) {
  // Mid-change (unsealed) the image owns its credentials; a copy made then must not.
  MetadataImage a;
  const auto c = auth::make_credential(auth::ScramMechanism::sha256, "pw", 4096);
  const std::string one = encode_change({scram_credential_record("alice", c)});
  apply_change(std::as_bytes(std::span<const char>(one.data(), one.size())), a);
  MetadataImage b = a;
  const std::string two = encode_change({scram_credential_record("bob", c)});
  apply_change(std::as_bytes(std::span<const char>(two.data(), two.size())), b);
  EXPECT_TRUE(b.scram_credential("bob", auth::ScramMechanism::sha256));
  EXPECT_FALSE(a.scram_credential("bob", auth::ScramMechanism::sha256));
  // Many users in one change: one copy, all there.
  MetadataImage many;
  std::vector<Bytes> records;
  for (int i = 0; i < 2000; ++i) records.push_back(scram_credential_record("user-" + std::to_string(i), c));
  replay(records, many);
  EXPECT_EQ(many.scram_credentials->size(), 2000u);
}

TEST(SecurityRecords, TenantLimitsAndOwnersCountUsageAndSurviveASnapshot) {
  MetadataImage image;
  auto topic = [](std::string name, std::string owner, int partitions) {
    TopicMetadata t;
    t.name = std::move(name);
    t.id = protocol::Uuid::random();
    t.owner = std::move(owner);
    t.partitions.resize(static_cast<size_t>(partitions));
    return t;
  };
  const auto web = topic("web", "User:team-a-web", 3);
  const auto etl = topic("etl", "User:team-a-etl", 2);
  const auto old = topic("old", "", 4);
  std::vector<Bytes> records;
  for (const auto* t : {&web, &etl, &old}) {
    records.push_back(topic_record(*t));
    for (int32_t p = 0; p < t->partition_count(); ++p) records.push_back(partition_record(t->id, p, {}));
    if (!t->owner.empty()) records.push_back(topic_owner_record(*t));
  }
  const tenant::Pattern team{"User:team-a-", tenant::kPrefixed};
  records.push_back(tenant_limit_record(team, "max.topics", 5, false));
  records.push_back(tenant_limit_record(team, "max.partitions", 6, false));
  replay(records, image);
  EXPECT_EQ(image.topic("web")->owner, "User:team-a-web");
  EXPECT_EQ(image.tenant_usage(team).topics, 2);
  EXPECT_EQ(image.tenant_usage(team).partitions, 5);
  EXPECT_EQ(image.tenant_usage({"User:team-a-web", tenant::kLiteral}).partitions, 3);

  const MetadataImage before = image;
  replay({tenant_limit_record(team, "max.topics", 0, true)}, image);
  EXPECT_EQ(image.tenant_limits->at(team).size(), 1u);
  EXPECT_EQ(before.tenant_limits->at(team).size(), 2u);

  MetadataImage restored;
  replay(image_records(image), restored);
  EXPECT_EQ(*restored.tenant_limits, *image.tenant_limits);
  EXPECT_EQ(restored.topic("etl")->owner, "User:team-a-etl");
  EXPECT_EQ(restored.topic("old")->owner, "");
  EXPECT_EQ(restored.tenant_usage(team).partitions, 5);
}

}  // namespace
}  // namespace brokerd::metadata
