// Mirror links as metadata: which topics and groups a link names, what it refuses, its
// records and their replay.
#include <gtest/gtest.h>

#include "brokerd/metadata/mirror_link.h"
#include "metadata/metadata_records.h"

namespace brokerd::metadata {
namespace {

MirrorLink sample() {
  MirrorLink l;
  l.name = "region-a";
  l.id = protocol::Uuid::random();
  l.source_bootstrap = "a1:9092,a2:9092";
  l.source_configs = {{"client.id", "dr"}};
  l.topics = {"orders"};
  l.topic_prefixes = {"pay."};
  l.exclude_topics = {"pay.secret"};
  l.group_prefixes = {"billing-"};
  return l;
}

void replay(const std::vector<Bytes>& records, MetadataImage& image) {
  const std::string change = encode_change(records);
  apply_change(std::as_bytes(std::span<const char>(change.data(), change.size())), image);
}

TEST(MirrorLink, NamesTopicsByNameAndPrefixMinusExclusionsAndNeverInternalOnes) {
  const MirrorLink l = sample();
  EXPECT_TRUE(l.mirrors_topic("orders"));
  EXPECT_TRUE(l.mirrors_topic("pay.eu"));
  EXPECT_FALSE(l.mirrors_topic("pay.secret"));
  EXPECT_FALSE(l.mirrors_topic("orders2"));
  EXPECT_FALSE(l.mirrors_topic("__consumer_offsets"));
  EXPECT_TRUE(l.mirrors_group("billing-eu"));
  EXPECT_FALSE(l.mirrors_group("audit"));
  MirrorLink all = l;
  all.all_groups = true;
  EXPECT_TRUE(all.mirrors_group("audit"));
}

TEST(MirrorLink, RefusesWhatCannotWork) {
  EXPECT_EQ(check_link(sample()), "");
  MirrorLink l = sample();
  l.name = "bad name";
  EXPECT_NE(check_link(l).find("illegal"), std::string::npos);
  l = sample();
  l.source_bootstrap.clear();
  EXPECT_NE(check_link(l), "");
  l = sample();
  l.topics.clear();
  l.topic_prefixes.clear();
  EXPECT_NE(check_link(l).find("no topic"), std::string::npos);
  l = sample();
  l.topic_prefixes = {""};
  EXPECT_NE(check_link(l).find("empty topic prefix"), std::string::npos);
  l = sample();
  l.topics = {"__consumer_offsets"};
  EXPECT_NE(check_link(l), "");
  l = sample();
  l.source_configs = {{"ssl.keystore.password", "x"}};
  EXPECT_NE(check_link(l).find("not supported"), std::string::npos);
  l.source_configs = {{"security.protocol", "SSL"}, {"ssl.truststore.location", "/etc/ca.pem"}};
  EXPECT_EQ(check_link(l), "");
  l.source_configs = {{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.username", "mirror"}};
  EXPECT_NE(check_link(l).find("sasl.password"), std::string::npos);
  l.source_configs = {{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.mechanism", "GSSAPI"},
                      {"sasl.username", "mirror"}, {"sasl.password", "p"}};
  EXPECT_NE(check_link(l).find("sasl.mechanism"), std::string::npos);
  l.source_configs = {{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.mechanism", "SCRAM-SHA-512"},
                      {"sasl.username", "mirror"}, {"sasl.password", "p"}};
  EXPECT_EQ(check_link(l), "");
}

TEST(MirrorLink, CopiesTopicConfigsButNotPlacementOrThrottles) {
  EXPECT_TRUE(mirrored_config("retention.ms"));
  EXPECT_TRUE(mirrored_config("cleanup.policy"));
  EXPECT_FALSE(mirrored_config("leader.replication.throttled.replicas"));
  EXPECT_FALSE(mirrored_config("min.insync.replicas"));
}

TEST(MirrorLink, RecordsReplayIntoTheImageAndIntoASnapshot) {
  MetadataImage image;
  auto topic = std::make_shared<TopicMetadata>();
  topic->name = "orders";
  topic->id = protocol::Uuid::random();
  topic->partitions.resize(2);
  const MirrorLink l = sample();
  TopicMetadata mirror = *topic;
  mirror.mirror_link = l.name;
  mirror.source_topic_id = protocol::Uuid::random();
  replay({topic_record(*topic), mirror_link_record(l), mirror_topic_record(mirror)}, image);
  ASSERT_NE(image.link("region-a"), nullptr);
  EXPECT_EQ(*image.link("region-a"), l);
  EXPECT_EQ(image.topic("orders")->mirror_link, "region-a");
  EXPECT_EQ(image.topic("orders")->source_topic_id, mirror.source_topic_id);

  // A snapshot holds both; replayed into an empty image it gives the same.
  MetadataImage restored;
  replay(image_records(image), restored);
  EXPECT_EQ(restored.links, image.links);
  EXPECT_EQ(restored.topic("orders")->mirror_link, "region-a");
  EXPECT_EQ(restored.topic("orders")->source_topic_id, mirror.source_topic_id);

  // Promotion clears the link and keeps the origin; removal drops the link.
  TopicMetadata promoted = mirror;
  promoted.mirror_link.clear();
  replay({mirror_topic_record(promoted), remove_mirror_link_record("region-a")}, image);
  EXPECT_EQ(image.topic("orders")->mirror_link, "");
  EXPECT_EQ(image.topic("orders")->source_topic_id, mirror.source_topic_id);
  EXPECT_EQ(image.link("region-a"), nullptr);
}

}  // namespace
}  // namespace brokerd::metadata
