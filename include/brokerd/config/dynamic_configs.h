#pragma once
// Broker configs changed at runtime: IncrementalAlterConfigs or AlterConfigs on BROKER
// resources, kept as ConfigRecords in the metadata log. The cluster-wide defaults live under
// the resource name "", each broker's own under its id. A broker's setting in force is its own
// dynamic value, else the cluster's dynamic default, else its static config (file or flag),
// else the built-in default. Which keys may be set this way, and what brokerd does with each,
// is broker_keys.h's table.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace brokerd::config {

class BrokerConfig;

// resource name ("" or a broker id) -> property -> value
using DynamicConfigs = std::map<std::string, std::map<std::string, std::string>>;

enum class DynamicLayer { per_broker, cluster_default };

struct DynamicValue {
  std::string value;
  DynamicLayer layer;
};

// The value one resource ("" or a broker id) sets for `name`, or null.
const std::string* layer_value(const DynamicConfigs& all, const std::string& resource, std::string_view name);

// The dynamic value of `name` for broker `node_id`, if either layer sets it.
std::optional<DynamicValue> dynamic_value(const DynamicConfigs& all, int32_t node_id, std::string_view name);

// Why a broker resource cannot hold `configs` (its whole set after the change) as Kafka
// judges it (broker_keys.h): read-only keys, key stores set without a listener, per-broker
// keys on the cluster default (`cluster_default`), values Kafka cannot parse or brokerd
// cannot apply; each reason names every key it applies to. nullopt when it can, with the
// values normalised into `normalised` (when given). Kafka answers each with INVALID_REQUEST.
std::optional<std::string> check_dynamic(const std::map<std::string, std::string>& configs, bool cluster_default,
                                         std::map<std::string, std::string>* normalised);

// Logs, once per write, each key `after` sets anew that this node keeps without acting on it
// (stored_ignored or unknown in broker_keys.h); values are not logged.
void note_keys_without_effect(const std::string& resource, const std::map<std::string, std::string>& before,
                              const std::map<std::string, std::string>& after);

// The value of broker property `name` in force on broker `node_id`: its dynamic value, else
// its static one.
std::string effective_value(const BrokerConfig& statics, const DynamicConfigs& all, int32_t node_id,
                            const std::string& name);

}  // namespace brokerd::config
