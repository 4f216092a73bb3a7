#pragma once
// Input checks done before anything is sent: a mistake is a UsageError (exit code 2).
#include <string>
#include <utility>
#include <vector>

namespace brokerctl {

// Kafka's rules: 1..249 characters of [a-zA-Z0-9._-], not "." or "..".
void check_topic_name(const std::string& name);
// A non-empty group id.
void check_group_name(const std::string& name);

struct ConfigChange {
  std::string key;
  std::string value;
};
// Parses "K=V" items; each key must be a topic property and each value valid for it.
std::vector<ConfigChange> parse_topic_configs(const std::vector<std::string>& items, const std::string& option);
// Keys given to --delete: each must be a topic property.
void check_topic_config_keys(const std::vector<std::string>& keys);
// Parses "K=V" items for a broker resource (`cluster_default` for the cluster-wide one): the
// keys and values a broker would take (config/broker_keys.h), or a UsageError with its reason.
std::vector<ConfigChange> parse_broker_configs(const std::vector<std::string>& items, const std::string& option,
                                               bool cluster_default);

}  // namespace brokerctl
