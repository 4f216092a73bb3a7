#pragma once
// What the config APIs (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs) and
// CreateTopics v5+ share: Kafka's ids for resource types, config sources and config types,
// the described entries of a topic or of this broker, and the writes of a topic's overrides
// and of dynamic broker configs.
#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "brokerd/config/dynamic_configs.h"
#include "brokerd/protocol/error_code.h"

namespace brokerd::config { class BrokerConfig; }
namespace brokerd::kafka {

struct Services;

// ConfigResource.Type
namespace resource_type {
constexpr int8_t topic = 2;
constexpr int8_t broker = 4;
constexpr int8_t broker_logger = 8;
constexpr int8_t client_metrics = 16;
constexpr int8_t group = 32;
}  // namespace resource_type

// DescribeConfigsResponse.ConfigSource
namespace config_source {
constexpr int8_t dynamic_topic = 1;
constexpr int8_t dynamic_broker = 2;
constexpr int8_t dynamic_default_broker = 3;
constexpr int8_t static_broker = 4;
constexpr int8_t default_config = 5;
}  // namespace config_source

struct ConfigSynonym {
  std::string name;
  std::string value;
  int8_t source = config_source::default_config;
};

struct ConfigEntry {
  std::string name;
  std::string value;
  bool read_only = false;
  int8_t source = config_source::default_config;
  int8_t type = 0;  // ConfigType: BOOLEAN=1 STRING=2 INT=3 SHORT=4 LONG=5 DOUBLE=6 LIST=7 PASSWORD=9
  bool sensitive = false;  // answered without its value
  bool null_value = false;  // no value at all (a key without a default that nothing sets)
  std::string_view doc;
  // Every place the value could come from, the one in force first (Kafka's order).
  std::vector<ConfigSynonym> synonyms;
};

// Where a broker's settings come from: its static config and the cluster's dynamic layers.
struct BrokerSettings {
  const config::BrokerConfig& statics;
  const config::DynamicConfigs& dynamic;
  int32_t node_id;
};

// Every topic property of a topic with `overrides`, by name. Synonyms follow Kafka: the
// topic's own value, then every layer of the broker keys that default it (broker_synonyms),
// from the first one named like the key Kafka maps the topic property to.
std::vector<ConfigEntry> topic_config_entries(const BrokerSettings& broker,
                                              const std::map<std::string, std::string>& topic_defaults,
                                              const std::map<std::string, std::string>& overrides);
// Every broker property, and every other key the broker's dynamic layers set, by name.
std::vector<ConfigEntry> broker_config_entries(const BrokerSettings& broker);
// The cluster-wide dynamic defaults (the broker resource named ""), by name.
std::vector<ConfigEntry> dynamic_default_entries(const BrokerSettings& broker);

// The value of a broker property in force on this node (dynamic, else static).
std::string broker_setting(const Services& svc, const std::string& name);
int64_t broker_integer(const Services& svc, const std::string& name);

// A broker resource name must be this node's id; empty names the cluster-wide dynamic
// defaults. Returns the INVALID_REQUEST message for anything else.
std::optional<std::string> check_broker_resource_name(std::string_view name, int32_t node_id);

std::string resource_type_name(int8_t type);

struct ConfigResult {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  std::string message;
};

// The answer to a resource type no config API here serves (empty when `type` is served).
std::optional<ConfigResult> unsupported_alter_resource(int8_t type);

// Replaces a topic's overrides (off the reactor), and brings the partition logs in line
// with the new image before returning.
boost::asio::awaitable<ConfigResult> write_topic_configs(Services& svc, const std::string& topic,
                                                         std::map<std::string, std::string> overrides,
                                                         bool validate_only);
// Replaces the dynamic configs of a broker resource (this node's id, or "" for the cluster),
// and brings this node's partitions in line with them before returning.
boost::asio::awaitable<ConfigResult> write_broker_configs(Services& svc, const std::string& resource,
                                                          std::map<std::string, std::string> configs,
                                                          bool validate_only);

}  // namespace brokerd::kafka
