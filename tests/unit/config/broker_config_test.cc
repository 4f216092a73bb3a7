#include "brokerd/config/broker_config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string_view>

#include "brokerd/config/properties.h"

using namespace brokerd::config;

namespace {
std::filesystem::path write_yaml(const std::string& text) {
  auto p = std::filesystem::temp_directory_path() / ("brokerd-config-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(p) << text;
  return p;
}
}  // namespace

TEST(BrokerConfig, DefaultsAreValid) {
  auto cfg = load_broker_config(std::nullopt, {});
  EXPECT_EQ(cfg.node_id(), 1);
  ASSERT_EQ(cfg.listeners().size(), 1u);
  EXPECT_EQ(cfg.listeners()[0].port, 9092);
  EXPECT_TRUE(cfg.boolean("auto.create.topics.enable"));
  EXPECT_EQ(cfg.integer("message.max.bytes"), 1048588);
}

TEST(BrokerConfig, FileThenOverrides) {
  auto p = write_yaml("node.id: 7\nlog.dirs: [/tmp/a, /tmp/b]\nnum.partitions: 3\n");
  auto cfg = load_broker_config(p, {"num.partitions=6", "log.retention.ms=-1"});
  EXPECT_EQ(cfg.node_id(), 7);
  EXPECT_EQ(cfg.log_dirs().size(), 2u);
  EXPECT_EQ(cfg.integer("num.partitions"), 6);
  EXPECT_EQ(cfg.source("num.partitions"), ConfigSource::override_flag);
  EXPECT_EQ(cfg.source("node.id"), ConfigSource::static_file);
  EXPECT_EQ(cfg.topic_defaults().at("retention.ms"), "-1");
  std::filesystem::remove(p);
}

TEST(BrokerConfig, UnknownKeyNamesTheKey) {
  try {
    load_broker_config(std::nullopt, {"log.retention.hourz=5"});
    FAIL() << "accepted an unknown key";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("log.retention.hourz"), std::string::npos);
  }
}

TEST(BrokerConfig, BadValuesAreRefused) {
  EXPECT_THROW(load_broker_config(std::nullopt, {"num.partitions=zero"}), ConfigError);
  EXPECT_THROW(load_broker_config(std::nullopt, {"num.partitions=0"}), ConfigError);
  EXPECT_THROW(load_broker_config(std::nullopt, {"auto.create.topics.enable=yes"}), ConfigError);
  EXPECT_THROW(load_broker_config(std::nullopt, {"listeners=localhost:9092"}), ConfigError);
  EXPECT_THROW(load_broker_config(std::nullopt, {"listeners=PLAINTEXT://:99999"}), ConfigError);
  EXPECT_THROW(load_broker_config(std::nullopt, {"log.cleanup.policy=delete,shred"}), ConfigError);
  EXPECT_THROW(load_broker_config(std::nullopt, {"novalue"}), ConfigError);
  auto p = write_yaml("node.id: [1: 2]\n");
  EXPECT_THROW(load_broker_config(p, {}), ConfigError);
  auto q = write_yaml("{ this is: not yaml");
  EXPECT_THROW(load_broker_config(q, {}), ConfigError);
  std::filesystem::remove(p);
  std::filesystem::remove(q);
}

TEST(Properties, TopicValidation) {
  const auto* def = find_topic_property("cleanup.policy");
  ASSERT_NE(def, nullptr);
  std::string norm;
  EXPECT_FALSE(validate_value(*def, " delete ", &norm));
  EXPECT_EQ(norm, "delete");
  // Compaction is accepted alone or with retention; unknown policies are refused.
  EXPECT_FALSE(validate_value(*def, "compact", &norm));
  EXPECT_EQ(norm, "compact");
  EXPECT_FALSE(validate_value(*def, "compact, delete", &norm));
  EXPECT_EQ(norm, "compact,delete");
  EXPECT_TRUE(validate_value(*def, "compact,shred"));
  EXPECT_TRUE(validate_value(*def, "retain"));
  EXPECT_TRUE(validate_value(*find_topic_property("retention.ms"), "-2"));
  EXPECT_TRUE(validate_value(*find_topic_property("min.cleanable.dirty.ratio"), "1.5"));
  EXPECT_FALSE(validate_value(*find_topic_property("min.cleanable.dirty.ratio"), "0.25"));
  EXPECT_EQ(find_topic_property("no.such"), nullptr);
  EXPECT_TRUE(validate_value(*def, "")) << "an empty cleanup.policy keeps nothing and deletes nothing";
}

TEST(ConfigFile, DocumentsEverySettingAndLoads) {
  const auto path = std::filesystem::path(BROKERD_SOURCE_DIR) / "config" / "brokerd.yaml";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& def : broker_properties()) {
    // inject.bug exists only in test builds with BROKERD_INJECT_BUGS (docs/reliability.md).
    if (std::string_view(def.name) == "inject.bug") continue;
    EXPECT_NE(text.find("# " + std::string(def.name) + ":"), std::string::npos) << def.name << " is not documented";
  }
  EXPECT_NO_THROW(load_broker_config(path, {}));
}
