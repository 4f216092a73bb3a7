#pragma once
// Broker configs changed at runtime: IncrementalAlterConfigs or AlterConfigs on BROKER
// resources, kept as ConfigRecords in the metadata log. The cluster-wide defaults live under
// the resource name "", each broker's own under its id. A broker's setting in force is its own
// dynamic value, else the cluster's dynamic default, else its static config (file or flag),
// else the built-in default. Only properties whose table entry is not read-only (properties.h)
// may be set this way; the others need a restart.
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

// Why `name` cannot be set to `value` at runtime (unknown, needs a restart, invalid), or
// nullopt with the value normalised into `normalised`.
std::optional<std::string> check_dynamic(std::string_view name, std::string_view value, std::string* normalised);

// The value of broker property `name` in force on broker `node_id`: its dynamic value, else
// its static one.
std::string effective_value(const BrokerConfig& statics, const DynamicConfigs& all, int32_t node_id,
                            const std::string& name);

}  // namespace brokerd::config
