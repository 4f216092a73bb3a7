// The metadata store as a state machine alone: changes committed through a quorum in memory,
// the image they give, and the same image rebuilt by replaying the entries or a snapshot into
// another store. No sockets, threads or disk.
#include <gtest/gtest.h>

#include "brokerd/metadata/metadata_store.h"
#include "utils/memory_quorum.h"

namespace brokerd::metadata {
namespace {

using protocol::ErrorCode;

struct Controller {
  MetadataStore store{"cluster-m", 1};
  testing::MemoryQuorum quorum{store, 1};
  Controller() {
    store.attach(quorum);
    auto [err, epoch] = store.register_broker(BrokerInfo{1, "127.0.0.1", 9092, ""}, "PLAINTEXT");
    EXPECT_EQ(err, ErrorCode::none);
    EXPECT_EQ(store.set_broker_fenced(1, epoch, false), ErrorCode::none);
  }
};

acl::Binding read_orders(const std::string& principal) {
  acl::Binding b;
  b.resource_type = acl::ResourceType::topic;
  b.resource_name = "orders";
  b.principal = principal;
  b.host = "*";
  return b;
}

TEST(MetadataStateMachine, ChangesCommitThroughTheQuorumIntoTheImage) {
  Controller c;
  ASSERT_TRUE(c.store.leads());
  auto t = c.store.create_topic("orders", 3, 1, {{"retention.ms", "60000"}}, false);
  ASSERT_EQ(t.error, ErrorCode::none) << t.message;
  EXPECT_EQ(c.store.create_partitions("orders", 5, false).error, ErrorCode::none);
  auto acls = c.store.create_acls({read_orders("User:alice")});
  ASSERT_EQ(acls.size(), 1u);
  EXPECT_EQ(acls[0].error, ErrorCode::none);
  EXPECT_EQ(c.store.set_broker_configs("", {{"log.retention.ms", "3600000"}}, false).error, ErrorCode::none);

  auto image = c.store.image();
  const TopicMetadata* orders = image->topic("orders");
  ASSERT_NE(orders, nullptr);
  EXPECT_EQ(orders->partition_count(), 5);
  EXPECT_EQ(orders->configs.at("retention.ms"), "60000");
  for (const auto& p : orders->partitions) EXPECT_EQ(p.leader, 1);
  EXPECT_EQ(image->acls->bindings.size(), 1u);
  EXPECT_EQ(image->broker_configs->at("").at("log.retention.ms"), "3600000");
  EXPECT_EQ(image->offset, static_cast<int64_t>(c.quorum.entries().size()) - 1);

  EXPECT_EQ(c.store.create_topic("orders", 1, 1, {}, false).error, ErrorCode::topic_already_exists);
  EXPECT_EQ(c.store.create_topic("wide", 1, 3, {}, false).error, ErrorCode::invalid_replication_factor)
      << "one broker cannot hold three copies";
}

// Every replica replays the same entries into the same image; a snapshot restores it too.
TEST(MetadataStateMachine, ReplayAndSnapshotGiveTheSameImage) {
  Controller c;
  ASSERT_EQ(c.store.create_topic("orders", 2, 1, {}, false).error, ErrorCode::none);
  ASSERT_EQ(c.store.create_topic("gone", 1, 1, {}, false).error, ErrorCode::none);
  ASSERT_EQ(c.store.delete_topic("gone").error, ErrorCode::none);
  ASSERT_EQ(c.store.create_acls({read_orders("User:bob")})[0].error, ErrorCode::none);
  const auto original = c.store.image();

  MetadataStore replica("cluster-m", 2);
  replica.apply(c.quorum.entries());
  const auto replayed = replica.image();
  EXPECT_EQ(replayed->offset, original->offset);
  ASSERT_NE(replayed->topic("orders"), nullptr);
  EXPECT_EQ(replayed->topic("orders")->id, original->topic("orders")->id);
  EXPECT_EQ(replayed->topic("gone"), nullptr);
  EXPECT_EQ(replayed->acls->bindings, original->acls->bindings);
  EXPECT_EQ(replayed->brokers.size(), 1u);

  raft::Snapshot snapshot;
  snapshot.id.offset = original->offset + 1;
  snapshot.data = c.store.snapshot()();
  MetadataStore restored("cluster-m", 3);
  restored.load_snapshot(snapshot);
  const auto image = restored.image();
  EXPECT_EQ(image->offset, original->offset);
  ASSERT_NE(image->topic("orders"), nullptr);
  EXPECT_EQ(image->topic("orders")->partition_count(), 2);
  EXPECT_EQ(image->acls->bindings, original->acls->bindings);
}

// Only the quorum's leader writes: without one, a change is refused before anything commits.
TEST(MetadataStateMachine, ANodeWithoutAQuorumDoesNotWrite) {
  MetadataStore store("cluster-m", 1);
  EXPECT_FALSE(store.leads());
  EXPECT_EQ(store.set_broker_configs("", {{"log.retention.ms", "1000"}}, false).error, ErrorCode::not_controller);
  EXPECT_TRUE(store.image()->broker_configs->empty());
}

}  // namespace
}  // namespace brokerd::metadata
