#include "brokerd/metadata/metadata_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "brokerd/metadata/node_identity.h"
#include "brokerd/quorum/quorum_driver.h"
#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/log.h"
#include "metadata/metadata_records.h"

using namespace brokerd::metadata;
using brokerd::protocol::ErrorCode;
namespace fs = std::filesystem;

namespace {

// A store on a quorum of one over the test's directory, started and caught up.
struct Node {
  std::unique_ptr<MetadataStore> store;
  std::unique_ptr<brokerd::quorum::QuorumDriver> quorum;
  MetadataStore* operator->() { return store.get(); }
  Node() = default;
  Node(Node&&) = default;
  ~Node() {
    if (quorum) quorum->stop(0);
  }
};

class MetadataStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("brokerd-meta-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Node open(int64_t snapshot_bytes = 20LL << 20) {
    Node n;
    n.store = std::make_unique<MetadataStore>("cluster-x", 1);
    brokerd::quorum::QuorumOptions o;
    o.node_id = 1;
    o.cluster_id = "cluster-x";
    o.voters = {{1, "", 0}};
    o.dir = dir_ / "__cluster_metadata-0";
    o.snapshot_bytes = snapshot_bytes;
    n.quorum = std::make_unique<brokerd::quorum::QuorumDriver>(o, n.store.get());
    n.store->attach(*n.quorum);
    n.quorum->start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    EXPECT_TRUE(n.store->wait_until_caught_up([&] { return std::chrono::steady_clock::now() > deadline; }));
    // The node registers itself as a broker, as it does at start.
    if (!n.store->image()->broker(1)) {
      auto [err, epoch] = n.store->register_broker(BrokerInfo{1, "127.0.0.1", 9092, ""}, "PLAINTEXT");
      EXPECT_EQ(err, ErrorCode::none);
      EXPECT_EQ(n.store->set_broker_fenced(1, epoch, false), ErrorCode::none);
    }
    return n;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(MetadataStoreTest, ChangesSurviveReopen) {
  brokerd::protocol::Uuid id;
  {
    auto store = open();
    auto c = store->create_topic("orders", 3, 1, {{"retention.ms", "1000"}, {"segment.bytes", "1048576"}}, false);
    ASSERT_EQ(c.error, ErrorCode::none) << c.message;
    id = c.topic->id;
    EXPECT_EQ(store->create_topic("gone", 1, 1, {}, false).error, ErrorCode::none);
    EXPECT_EQ(store->delete_topic("gone").error, ErrorCode::none);
    EXPECT_EQ(store->create_partitions("orders", 5, false).error, ErrorCode::none);
    EXPECT_EQ(store->set_topic_configs("orders", {{"retention.ms", "2000"}}, false).error, ErrorCode::none);
  }
  auto store = open();
  auto image = store->image();
  ASSERT_EQ(image->topic_count(), 1u);
  const TopicMetadata* t = image->topic("orders");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->id, id);
  EXPECT_EQ(image->topic(id), t);
  EXPECT_EQ(t->partition_count(), 5);
  EXPECT_EQ(t->configs.size(), 1u);
  EXPECT_EQ(t->configs.at("retention.ms"), "2000");
  EXPECT_EQ(image->topic("gone"), nullptr);
  EXPECT_EQ(image->cluster_id, "cluster-x");
  EXPECT_GE(image->offset, 0);
}

// Dynamic broker configs: a set per resource (a broker id, or "" for the cluster), replaced
// whole, kept across a restart and in snapshots; keys needing a restart or bad values refused.
TEST_F(MetadataStoreTest, DynamicBrokerConfigsAreReplacedWholeAndSurviveReopen) {
  {
    auto store = open(4096);
    auto c = store->set_broker_configs("", {{"log.retention.ms", "3600000"}, {"log.cleanup.policy", "compact, delete"}}, false);
    ASSERT_EQ(c.error, ErrorCode::none) << c.message;
    ASSERT_NE(c.image, nullptr);
    EXPECT_EQ(c.image->broker_configs->at("").at("log.cleanup.policy"), "compact,delete") << "normalised";
    EXPECT_EQ(store->set_broker_configs("1", {{"leader.replication.throttled.rate", "1000"}}, false).error, ErrorCode::none);
    auto refused = store->set_broker_configs("1", {{"log.dirs", "/elsewhere"}}, false);
    EXPECT_EQ(refused.error, ErrorCode::invalid_request);
    EXPECT_NE(refused.message.find("Cannot update these configs dynamically: Set(log.dirs)"), std::string::npos) << refused.message;
    EXPECT_EQ(store->set_broker_configs("3", {{"no.such.config", "1"}}, false).error, ErrorCode::none)
        << "custom keys are stored, as Kafka stores them";
    EXPECT_EQ(store->set_broker_configs("1", {{"log.retention.ms", "soon"}}, false).error, ErrorCode::invalid_request);
    EXPECT_EQ(store->set_broker_configs("2", {{"num.partitions", "4"}}, true).error, ErrorCode::none);
    EXPECT_FALSE(store->image()->broker_configs->contains("2")) << "validate_only must not write";
    // Replacing a set drops what it no longer names.
    EXPECT_EQ(store->set_broker_configs("", {{"log.retention.ms", "7200000"}}, false).error, ErrorCode::none);
    for (int i = 0; i < 100; ++i)  // enough changes for a snapshot below the configs
      ASSERT_EQ(store->create_topic("t" + std::to_string(i), 1, 1, {}, false).error, ErrorCode::none);
  }
  auto store = open(4096);
  auto image = store->image();
  const brokerd::config::DynamicConfigs want = {{"", {{"log.retention.ms", "7200000"}}},
                                                {"1", {{"leader.replication.throttled.rate", "1000"}}},
                                                {"3", {{"no.such.config", "1"}}}};
  EXPECT_EQ(*image->broker_configs, want);
  // An empty set removes the resource.
  EXPECT_EQ(store->set_broker_configs("1", {}, false).error, ErrorCode::none);
  EXPECT_FALSE(store->image()->broker_configs->contains("1"));
}

TEST_F(MetadataStoreTest, RefusesBadChanges) {
  auto store = open();
  EXPECT_EQ(store->create_topic("bad/name", 1, 1, {}, false).error, ErrorCode::invalid_topic_exception);
  EXPECT_EQ(store->create_topic(std::string(250, 'a'), 1, 1, {}, false).error, ErrorCode::invalid_topic_exception);
  EXPECT_EQ(store->create_topic("t", 0, 1, {}, false).error, ErrorCode::invalid_partitions);
  EXPECT_EQ(store->create_topic("t", 1, 3, {}, false).error, ErrorCode::invalid_replication_factor);
  EXPECT_EQ(store->create_topic("t", 1, 1, {{"no.such", "1"}}, false).error, ErrorCode::invalid_config);
  EXPECT_EQ(store->create_topic("t", 1, 1, {{"retention.ms", "soon"}}, false).error, ErrorCode::invalid_config);
  EXPECT_EQ(store->create_topic("t", 1, 1, {}, true).error, ErrorCode::none);
  EXPECT_EQ(store->image()->topic("t"), nullptr) << "validate_only must not create";
  EXPECT_EQ(store->create_topic("t", 2, 1, {}, false).error, ErrorCode::none);
  EXPECT_EQ(store->create_topic("t", 2, 1, {}, false).error, ErrorCode::topic_already_exists);
  EXPECT_EQ(store->create_partitions("t", 2, false).error, ErrorCode::invalid_partitions);
  EXPECT_EQ(store->create_partitions("nope", 4, false).error, ErrorCode::unknown_topic_or_partition);
  EXPECT_EQ(store->delete_topic("nope").error, ErrorCode::unknown_topic_or_partition);
}

// Once enough was applied, the image becomes a snapshot and the log below it goes; a restart
// loads the snapshot and replays what follows it.
TEST_F(MetadataStoreTest, SnapshotsBoundTheLogAndRestoreTheImage) {
  std::vector<std::string> ids;
  {
    auto store = open(4096);
    for (int i = 0; i < 200; ++i) {
      auto c = store->create_topic("t" + std::to_string(i), 1 + i % 3, 1, {{"retention.ms", std::to_string(1000 + i)}}, false);
      ASSERT_EQ(c.error, ErrorCode::none);
      ids.push_back(c.topic->id.to_string());
    }
    ASSERT_EQ(store->delete_topic("t7").error, ErrorCode::none);
    store->allocate_producer_ids(1, -1);
  }
  size_t snapshots = 0;
  for (const auto& e : fs::directory_iterator(dir_ / "__cluster_metadata-0"))
    snapshots += e.path().extension() == ".checkpoint" ? 1 : 0;
  EXPECT_GE(snapshots, 1u) << "no snapshot file written";
  auto store = open(4096);
  auto image = store->image();
  EXPECT_EQ(image->topic_count(), 199u);
  EXPECT_EQ(image->topic("t7"), nullptr);
  for (int i : {0, 1, 150, 199}) {
    const TopicMetadata* t = image->topic("t" + std::to_string(i));
    ASSERT_NE(t, nullptr) << i;
    EXPECT_EQ(t->id.to_string(), ids[static_cast<size_t>(i)]);
    EXPECT_EQ(t->partition_count(), 1 + i % 3);
    EXPECT_EQ(t->partitions[0].leader, 1);
    EXPECT_EQ(t->configs.at("retention.ms"), std::to_string(1000 + i));
  }
  EXPECT_EQ(image->next_producer_id, ProducerIdManager::kBlockSize);
  ASSERT_NE(image->broker(1), nullptr);
  EXPECT_FALSE(image->broker(1)->fenced);
}

TEST_F(MetadataStoreTest, RecreatedTopicGetsNewId) {
  auto store = open();
  auto a = store->create_topic("t", 1, 1, {}, false).topic->id;
  store->delete_topic("t");
  auto b = store->create_topic("t", 1, 1, {}, false).topic->id;
  EXPECT_NE(a, b);
}

// A metadata log written by a release that kept it locally (one batch of records per change,
// leader epoch 0) is a log of the quorum's: a single node starts from it unchanged.
TEST_F(MetadataStoreTest, ReplaysALocalMetadataLogOfAnEarlierRelease) {
  TopicMetadata t;
  t.name = "legacy";
  t.id = brokerd::protocol::Uuid::random();
  PartitionAssignment a;
  a.replicas = a.isr = {1};
  a.leader = 1;
  t.partitions = {a, a};
  {
    brokerd::storage::LogConfig cfg;
    cfg.retention_ms = -1;
    auto log = brokerd::storage::Log::open(dir_ / "__cluster_metadata-0", cfg, true);
    brokerd::storage::BatchBuilder b;
    for (const auto& r : {topic_record(t), partition_record(t.id, 0, a), partition_record(t.id, 1, a),
                          config_record("legacy", "retention.ms", "5000"), producer_ids_record(1, -1, 3000)}) {
      b.add(1000, std::nullopt, std::span<const std::byte>(r));
    }
    auto batch = b.build();
    ASSERT_EQ(log->append(batch, 0, 1000, brokerd::storage::AppendOrigin::internal).error, ErrorCode::none);
    log->close();
  }
  auto store = open();
  auto image = store->image();
  const TopicMetadata* got = image->topic("legacy");
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->id, t.id);
  EXPECT_EQ(got->partition_count(), 2);
  EXPECT_EQ(got->partitions[1].leader, 1);
  EXPECT_EQ(got->configs.at("retention.ms"), "5000");
  EXPECT_EQ(image->next_producer_id, 3000);
  // And it goes on from there.
  EXPECT_EQ(store->create_topic("next", 1, 1, {}, false).error, ErrorCode::none);
  EXPECT_EQ(store->allocate_producer_ids(1, -1).first, 3000);
}

TEST_F(MetadataStoreTest, BrokersRegisterFenceAndUnfenceByEpoch) {
  auto store = open();
  auto [err, epoch] = store->register_broker(BrokerInfo{2, "h2", 9093, "zone-b"}, "PLAINTEXT");
  ASSERT_EQ(err, ErrorCode::none);
  const BrokerInfo* b = store->image()->broker(2);
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->fenced);
  EXPECT_EQ(b->rack, "zone-b");
  EXPECT_EQ(store->image()->live_brokers(), 1);
  EXPECT_EQ(store->create_topic("two", 1, 2, {}, false).error, ErrorCode::invalid_replication_factor);
  EXPECT_EQ(store->set_broker_fenced(2, epoch, false), ErrorCode::none);
  EXPECT_EQ(store->image()->live_brokers(), 2);
  // Now the topic's partitions go to both brokers, each with a replica on each.
  auto two = store->create_topic("two", 4, 2, {}, false);
  ASSERT_EQ(two.error, ErrorCode::none);
  std::map<int32_t, int> leaders;
  for (const auto& p : two.topic->partitions) {
    EXPECT_EQ(p.replicas.size(), 2u);
    EXPECT_NE(p.replicas[0], p.replicas[1]);
    EXPECT_EQ(p.isr, p.replicas) << "every replica of a new partition is in sync";
    EXPECT_EQ(p.leader, p.replicas[0]);
    ++leaders[p.leader];
  }
  EXPECT_EQ(leaders[1], 2);
  EXPECT_EQ(leaders[2], 2);
  // A manual assignment may name live brokers only.
  EXPECT_EQ(store->create_topic("manual", 0, 0, {}, false, {{2}, {3}}).error, ErrorCode::invalid_replica_assignment);
  auto manual = store->create_topic("manual", 0, 0, {}, false, {{2}, {1}});
  ASSERT_EQ(manual.error, ErrorCode::none);
  EXPECT_EQ(manual.topic->partitions[1].leader, 1);
  // Fencing broker 2 moves the partitions it led to broker 1, the other in-sync replica, and
  // takes 2 out of every ISR; the partition only 2 holds goes offline.
  EXPECT_EQ(store->set_broker_fenced(2, epoch, true), ErrorCode::none);
  for (const auto& p : store->image()->topic("two")->partitions) {
    EXPECT_EQ(p.leader, 1);
    EXPECT_EQ(p.isr, std::vector<int32_t>{1});
    EXPECT_EQ(p.leader_epoch, p.replicas[0] == 2 ? 1 : 0);
  }
  EXPECT_EQ(store->image()->topic("manual")->partitions[0].leader, -1);
  // Unfenced, 2 leads its own partition again; elsewhere it stays out of the ISR until a
  // leader has seen it catch up.
  EXPECT_EQ(store->set_broker_fenced(2, epoch, false), ErrorCode::none);
  for (const auto& p : store->image()->topic("two")->partitions) EXPECT_EQ(p.leader, 1);
  EXPECT_EQ(store->image()->topic("manual")->partitions[0].leader, 2);
  EXPECT_EQ(store->set_broker_fenced(2, epoch - 1, true), ErrorCode::stale_broker_epoch);
  // A new registration gets a larger epoch; the old one's fence no longer applies.
  auto [err2, epoch2] = store->register_broker(BrokerInfo{2, "h2", 9093, "zone-b"}, "PLAINTEXT");
  ASSERT_EQ(err2, ErrorCode::none);
  EXPECT_GT(epoch2, epoch);
  EXPECT_EQ(store->set_broker_fenced(2, epoch, true), ErrorCode::stale_broker_epoch);
}

TEST_F(MetadataStoreTest, ABrokerRegistersEveryListener) {
  auto store = open();
  BrokerInfo info{2, "h2", 9092, ""};
  info.listener = "PLAINTEXT";
  info.endpoints = {{"SSL", "h2", 9093, 1}, {"PLAINTEXT", "h2", 9092, 0}, {"MTLS", "h2", 9094, 1},
                    {"SASL_SSL", "h2", 9095, 3}, {"SASL_PLAINTEXT", "h2", 9096, 2}};
  ASSERT_EQ(store->register_broker(info, "PLAINTEXT").first, ErrorCode::none);
  const BrokerInfo* b = store->image()->broker(2);
  ASSERT_NE(b, nullptr);
  for (const auto& e : info.endpoints) EXPECT_EQ(endpoint_for(*b, e.listener), e) << e.listener;
}

// Links and their mirror topics: created on the controller, kept across a restart, promoted
// together, and a link goes only once it has no mirror topic left.
TEST_F(MetadataStoreTest, MirrorLinksAndTheirTopics) {
  {
    auto store = open();
    MirrorLink l;
    l.name = "dr";
    l.source_bootstrap = "127.0.0.1:1";
    l.topics = {"orders"};
    EXPECT_EQ(store->create_link(l, true).error, ErrorCode::none);
    EXPECT_EQ(store->image()->link("dr"), nullptr) << "validate_only must not create";
    ASSERT_EQ(store->create_link(l, false).error, ErrorCode::none);
    EXPECT_EQ(store->create_link(l, false).error, ErrorCode::invalid_request) << "twice";
    TopicSpec spec;
    spec.name = "orders";
    spec.partitions = 2;
    spec.replication_factor = 1;
    spec.configs = {{"retention.ms", "1000"}};
    spec.mirror_link = "dr";
    spec.source_topic_id = brokerd::protocol::Uuid::random();
    auto created = store->create_topics({spec}, false);
    ASSERT_EQ(created[0].error, ErrorCode::none) << created[0].message;
    EXPECT_EQ(store->alter_link("dr", LinkOperation::pause).error, ErrorCode::none);
    EXPECT_EQ(store->alter_link("dr", LinkOperation::remove).error, ErrorCode::invalid_request)
        << "a link with mirror topics stays";
    EXPECT_EQ(store->alter_link("nope", LinkOperation::pause).error, ErrorCode::resource_not_found);
  }
  auto store = open();
  auto image = store->image();
  ASSERT_NE(image->link("dr"), nullptr);
  EXPECT_TRUE(image->link("dr")->paused);
  EXPECT_EQ(image->topic("orders")->mirror_link, "dr");
  auto [whole, results] = store->promote_mirror_topics("dr", std::vector<std::string>{"orders", "nope"});
  EXPECT_EQ(whole.error, ErrorCode::none);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].second.error, ErrorCode::none);
  EXPECT_EQ(results[1].second.error, ErrorCode::unknown_topic_or_partition);
  EXPECT_EQ(store->image()->topic("orders")->mirror_link, "");
  EXPECT_EQ(store->alter_link("dr", LinkOperation::remove).error, ErrorCode::none);
  EXPECT_EQ(store->image()->link("dr"), nullptr);
}

TEST(TopicNames, KafkaRules) {
  EXPECT_TRUE(valid_topic_name("a.b_c-D9"));
  EXPECT_FALSE(valid_topic_name(""));
  EXPECT_FALSE(valid_topic_name("."));
  EXPECT_FALSE(valid_topic_name(".."));
  EXPECT_FALSE(valid_topic_name("a b"));
  EXPECT_TRUE(valid_topic_name(std::string(249, 'x')));
  EXPECT_FALSE(valid_topic_name(std::string(250, 'x')));
}

TEST(NodeIdentity, CreatesThenChecks) {
  auto dir = fs::temp_directory_path() / ("brokerd-ident-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto id = ensure_node_identity({dir}, 3);
  EXPECT_FALSE(id.empty());
  EXPECT_EQ(ensure_node_identity({dir}, 3), id);
  EXPECT_THROW(ensure_node_identity({dir}, 4), std::runtime_error);
  fs::remove_all(dir);
}

// Leaders' ISR changes sent together: each is checked on its own, and the accepted ones are one
// change of the metadata log.
TEST_F(MetadataStoreTest, IsrChangesOfManyPartitionsCommitTogether) {
  auto store = open();
  for (int32_t id : {2, 3}) {
    auto [err, epoch] = store->register_broker(BrokerInfo{id, "127.0.0.1", 9092 + id, ""}, "PLAINTEXT");
    ASSERT_EQ(err, ErrorCode::none);
    ASSERT_EQ(store->set_broker_fenced(id, epoch, false), ErrorCode::none);
  }
  auto c = store->create_topic("isr", 3, 3, {}, false);
  ASSERT_EQ(c.error, ErrorCode::none) << c.message;
  const auto before = store->image();
  const TopicMetadata* t = before->topic("isr");
  ASSERT_NE(t, nullptr);
  // Each partition's ISR drops its last replica (never the leader).
  auto shrink = [&](int32_t p, int32_t partition_epoch_delta) {
    const PartitionAssignment& a = *t->partition(p);
    AlterPartitionItem item{t->id, p, {}};
    item.request.leader = a.leader;
    item.request.leader_epoch = a.leader_epoch;
    item.request.partition_epoch = a.partition_epoch + partition_epoch_delta;
    for (int32_t r : a.isr)
      if (r == a.leader || item.request.new_isr.size() + 1 < a.isr.size()) item.request.new_isr.push_back(r);
    return item;
  };
  const std::vector<AlterPartitionItem> items = {shrink(0, 0), shrink(1, -1), shrink(2, 0), shrink(0, 0)};
  const auto answers = store->alter_partitions(items);
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(answers[0].error, ErrorCode::none);
  EXPECT_EQ(answers[1].error, ErrorCode::invalid_update_version);  // a stale partition epoch
  EXPECT_EQ(answers[2].error, ErrorCode::none);
  EXPECT_EQ(answers[3].error, ErrorCode::invalid_update_version);  // partition 0 moved on already
  EXPECT_EQ(answers[0].assignment.isr.size(), 2u);
  EXPECT_EQ(answers[0].assignment.partition_epoch, t->partition(0)->partition_epoch + 1);
  const auto after = store->image();
  EXPECT_EQ(after->offset, before->offset + 1) << "one entry for both accepted changes";
  const TopicMetadata* now = after->topic("isr");
  EXPECT_EQ(now->partition(0)->isr, answers[0].assignment.isr);
  EXPECT_EQ(now->partition(1)->isr, t->partition(1)->isr);
  EXPECT_EQ(now->partition(2)->isr, answers[2].assignment.isr);
}
