// IncrementalAlterConfigs as the controller answers it: the operations on one resource's set
// (SET, DELETE, APPEND, SUBTRACT; list keys only for the last two; Kafka's codes and words),
// and the answer of a store that leads a quorum in memory: changes applied to the set as it
// stands, so concurrent changes of different keys all stay; refusals (validation, a mirror's
// copied configs, resources named twice) write nothing.
#include "brokerd/metadata/config_requests.h"

#include <gtest/gtest.h>

#include <thread>

#include "brokerd/config/broker_config.h"
#include "brokerd/metadata/metadata_store.h"
#include "utils/memory_quorum.h"

namespace brokerd::metadata {
namespace {

using protocol::ErrorCode;
using protocol::IncrementalAlterConfigsRequest;
using Resource = IncrementalAlterConfigsRequest::AlterConfigsResource;
using ConfigMap = std::map<std::string, std::string>;

Resource resource(int8_t type, std::string name,
                  std::vector<std::tuple<std::string, int8_t, std::optional<std::string>>> ops) {
  Resource r;
  r.resource_type = type;
  r.resource_name = std::move(name);
  for (auto& [key, op, value] : ops) {
    auto& c = r.configs.emplace_back();
    c.name = key;
    c.config_operation = op;
    c.value = value;
  }
  return r;
}

std::string no_value(const std::string&) { return {}; }

TEST(ConfigOps, SetAndDeleteChangeOnlyTheirKeys) {
  ConfigMap configs{{"retention.ms", "1000"}, {"segment.bytes", "1048576"}};
  auto res = resource(kTopicConfigResource, "t",
                      {{"retention.ms", kConfigSet, "2000"}, {"segment.bytes", kConfigDelete, std::nullopt}});
  EXPECT_EQ(apply_config_ops(res, configs, false, no_value), std::nullopt);
  EXPECT_EQ(configs, (ConfigMap{{"retention.ms", "2000"}}));
}

TEST(ConfigOps, AppendAndSubtractStartFromTheValueInForce) {
  ConfigMap configs;
  auto in_force = [](const std::string& name) { return name == "cleanup.policy" ? "delete" : ""; };
  auto append = resource(kTopicConfigResource, "t", {{"cleanup.policy", kConfigAppend, "compact,delete"}});
  EXPECT_EQ(apply_config_ops(append, configs, false, in_force), std::nullopt);
  EXPECT_EQ(configs.at("cleanup.policy"), "delete,compact") << "no item twice";
  auto subtract = resource(kTopicConfigResource, "t", {{"cleanup.policy", kConfigSubtract, "delete"}});
  EXPECT_EQ(apply_config_ops(subtract, configs, false, in_force), std::nullopt);
  EXPECT_EQ(configs.at("cleanup.policy"), "compact") << "the set value, not the one in force";
}

TEST(ConfigOps, ListOperationsOnOtherKeysAreRefusedInKafkasWords) {
  ConfigMap configs;
  auto topic = apply_config_ops(resource(kTopicConfigResource, "t", {{"retention.ms", kConfigAppend, "1"}}), configs,
                                false, no_value);
  ASSERT_TRUE(topic);
  EXPECT_EQ(topic->error, ErrorCode::invalid_config);
  EXPECT_EQ(topic->message, "Can't APPEND to key retention.ms because its type is not LIST.");
  auto broker = apply_config_ops(resource(kBrokerConfigResource, "1", {{"log.retention.ms", kConfigSubtract, "1"}}),
                                 configs, true, no_value);
  ASSERT_TRUE(broker);
  EXPECT_EQ(broker->error, ErrorCode::invalid_config);
  EXPECT_EQ(broker->message, "Config value subtract is not allowed for config key: log.retention.ms");
  auto unknown = apply_config_ops(resource(kBrokerConfigResource, "1", {{"no.such.key", kConfigAppend, "1"}}), configs,
                                  true, no_value);
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->message, "Unknown config name: no.such.key");
}

TEST(ConfigOps, TopicsKnowOnlyTopicKeysWhileBrokersStoreAnyKey) {
  ConfigMap configs;
  auto topic = apply_config_ops(resource(kTopicConfigResource, "t", {{"no.such.key", kConfigSet, "1"}}), configs,
                                false, no_value);
  ASSERT_TRUE(topic);
  EXPECT_EQ(topic->error, ErrorCode::invalid_config);
  EXPECT_EQ(topic->message, "Unknown topic config name: no.such.key");
  EXPECT_EQ(apply_config_ops(resource(kBrokerConfigResource, "", {{"no.such.key", kConfigSet, "1"}}), configs, true,
                             no_value),
            std::nullopt);
  EXPECT_EQ(configs.at("no.such.key"), "1");
}

TEST(ConfigOps, UnknownOperationsAndNullValuesAreInvalidRequests) {
  ConfigMap configs;
  auto op = apply_config_ops(resource(kTopicConfigResource, "t", {{"retention.ms", 7, "1"}}), configs, false, no_value);
  ASSERT_TRUE(op);
  EXPECT_EQ(op->error, ErrorCode::invalid_request);
  EXPECT_EQ(op->message, "Unknown alter config operation type 7");
  auto null = apply_config_ops(resource(kTopicConfigResource, "t", {{"retention.ms", kConfigSet, std::nullopt}}),
                               configs, false, no_value);
  ASSERT_TRUE(null);
  EXPECT_EQ(null->error, ErrorCode::invalid_request);
  EXPECT_EQ(null->message, "Null value not supported for : retention.ms");
  auto twice = check_config_keys(resource(kTopicConfigResource, "t",
                                          {{"retention.ms", kConfigSet, "1"}, {"retention.ms", kConfigDelete, std::nullopt}}));
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->message, "Error due to duplicate config keys");
}

struct Controller {
  MetadataStore store{"cluster-c", 1};
  testing::MemoryQuorum quorum{store, 1};
  config::BrokerConfig statics;
  Controller() {
    store.attach(quorum);
    auto [err, epoch] = store.register_broker(BrokerInfo{1, "127.0.0.1", 9092, ""}, "PLAINTEXT");
    EXPECT_EQ(err, ErrorCode::none);
    EXPECT_EQ(store.set_broker_fenced(1, epoch, false), ErrorCode::none);
  }
  std::pair<ErrorCode, std::string> alter(Resource res, bool validate_only = false) {
    IncrementalAlterConfigsRequest req;
    req.resources.push_back(std::move(res));
    req.validate_only = validate_only;
    auto resp = answer_incremental_alter_configs(store, req, statics);
    EXPECT_EQ(resp.responses.size(), 1u);
    return {static_cast<ErrorCode>(resp.responses[0].error_code), resp.responses[0].error_message.value_or("")};
  }
};

TEST(IncrementalAlterConfigsAnswer, OperationsApplyToTheControllersCurrentSet) {
  Controller c;
  ASSERT_EQ(c.store.create_topic("orders", 1, 1, {{"retention.ms", "1000"}}, false).error, ErrorCode::none);
  // Another writer changed a key since: an increment keeps it.
  ASSERT_EQ(c.store.set_topic_configs("orders", {{"retention.ms", "1000"}, {"segment.bytes", "1048576"}}, false).error,
            ErrorCode::none);
  EXPECT_EQ(c.alter(resource(kTopicConfigResource, "orders", {{"retention.ms", kConfigSet, "2000"}})).first,
            ErrorCode::none);
  EXPECT_EQ(c.store.image()->topic("orders")->configs, (ConfigMap{{"retention.ms", "2000"}, {"segment.bytes", "1048576"}}));
  // APPEND starts from the default in force.
  EXPECT_EQ(c.alter(resource(kTopicConfigResource, "orders", {{"cleanup.policy", kConfigAppend, "compact"}})).first,
            ErrorCode::none);
  EXPECT_EQ(c.store.image()->topic("orders")->configs.at("cleanup.policy"), "delete,compact");
}

TEST(IncrementalAlterConfigsAnswer, ValidateOnlyAndRefusalsWriteNothing) {
  Controller c;
  ASSERT_EQ(c.store.create_topic("orders", 1, 1, {}, false).error, ErrorCode::none);
  const auto before = c.quorum.entries().size();
  EXPECT_EQ(c.alter(resource(kTopicConfigResource, "orders", {{"retention.ms", kConfigSet, "2000"}}), true).first,
            ErrorCode::none);
  EXPECT_EQ(c.alter(resource(kTopicConfigResource, "orders", {{"retention.ms", kConfigSet, "soon"}})).first,
            ErrorCode::invalid_config);
  EXPECT_EQ(c.alter(resource(kTopicConfigResource, "missing", {{"retention.ms", kConfigSet, "1"}})),
            std::make_pair(ErrorCode::unknown_topic_or_partition, std::string("The topic 'missing' does not exist.")));
  auto read_only = c.alter(resource(kBrokerConfigResource, "1", {{"broker.id", kConfigSet, "7"}}));
  EXPECT_EQ(read_only.first, ErrorCode::invalid_request);
  EXPECT_EQ(read_only.second, "Cannot update these configs dynamically: Set(broker.id)");
  EXPECT_EQ(c.quorum.entries().size(), before);
  EXPECT_TRUE(c.store.image()->topic("orders")->configs.empty());
}

TEST(IncrementalAlterConfigsAnswer, AMirrorKeepsTheConfigsItsLinkCopies) {
  Controller c;
  MirrorLink link;
  link.name = "dr";
  link.source_bootstrap = "127.0.0.1:1";
  link.topics = {"orders"};
  ASSERT_EQ(c.store.create_link(link, false).error, ErrorCode::none);
  TopicSpec spec;
  spec.name = "orders";
  spec.partitions = 1;
  spec.replication_factor = 1;
  spec.mirror_link = "dr";
  spec.source_topic_id = protocol::Uuid::random();
  ASSERT_EQ(c.store.create_topics({spec}, false)[0].error, ErrorCode::none);
  EXPECT_EQ(c.alter(resource(kTopicConfigResource, "orders", {{"retention.ms", kConfigSet, "1000"}})),
            std::make_pair(ErrorCode::invalid_request,
                           std::string("Topic orders is a mirror of link dr and is read-only until the link promotes it.")));
  EXPECT_EQ(c.alter(resource(kTopicConfigResource, "orders", {{"min.insync.replicas", kConfigSet, "1"}})).first,
            ErrorCode::none)
      << "a setting the link does not copy stays this cluster's";
  EXPECT_EQ(c.store.image()->topic("orders")->configs, (ConfigMap{{"min.insync.replicas", "1"}}));
}

TEST(IncrementalAlterConfigsAnswer, ResourcesNamedTwiceAndOtherTypesAreRefused) {
  Controller c;
  IncrementalAlterConfigsRequest req;
  req.resources.push_back(resource(kBrokerConfigResource, "", {{"log.retention.ms", kConfigSet, "1000"}}));
  req.resources.push_back(resource(kBrokerConfigResource, "", {{"log.retention.bytes", kConfigSet, "1000"}}));
  req.resources.push_back(resource(8, "1", {{"x", kConfigSet, "INFO"}}));
  auto resp = answer_incremental_alter_configs(c.store, req, c.statics);
  ASSERT_EQ(resp.responses.size(), 3u);
  for (const auto& r : resp.responses) EXPECT_EQ(static_cast<ErrorCode>(r.error_code), ErrorCode::invalid_request);
  EXPECT_EQ(resp.responses[0].error_message, "Each resource must appear at most once.");
  EXPECT_EQ(resp.responses[2].resource_type, 8);
  EXPECT_EQ(c.store.image()->broker_configs->count(""), 0u);
}

TEST(IncrementalAlterConfigsAnswer, ANodeThatDoesNotLeadAnswersNotController) {
  MetadataStore follower("cluster-c", 2);
  config::BrokerConfig statics;
  IncrementalAlterConfigsRequest req;
  req.resources.push_back(resource(kBrokerConfigResource, "", {{"log.retention.ms", kConfigSet, "1000"}}));
  auto resp = answer_incremental_alter_configs(follower, req, statics);
  ASSERT_EQ(resp.responses.size(), 1u);
  EXPECT_EQ(static_cast<ErrorCode>(resp.responses[0].error_code), ErrorCode::not_controller);
}

TEST(IncrementalAlterConfigsAnswer, ConcurrentChangesOfDifferentKeysAllStay) {
  Controller c;
  constexpr int kRounds = 200;
  auto writer = [&c](const std::string& key, int64_t base) {
    for (int i = 0; i < kRounds; ++i) {
      IncrementalAlterConfigsRequest req;
      req.resources.push_back(resource(kBrokerConfigResource, "", {{key, kConfigSet, std::to_string(base + i)}}));
      auto resp = answer_incremental_alter_configs(c.store, req, c.statics);
      ASSERT_EQ(resp.responses.at(0).error_code, 0) << resp.responses[0].error_message.value_or("");
    }
  };
  std::thread a(writer, "log.retention.ms", 3'600'000), b(writer, "log.retention.bytes", 1'000'000);
  a.join();
  b.join();
  const auto& defaults = c.store.image()->broker_configs->at("");
  EXPECT_EQ(defaults.at("log.retention.ms"), std::to_string(3'600'000 + kRounds - 1));
  EXPECT_EQ(defaults.at("log.retention.bytes"), std::to_string(1'000'000 + kRounds - 1));
}

}  // namespace
}  // namespace brokerd::metadata
