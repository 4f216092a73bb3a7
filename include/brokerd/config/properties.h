#pragma once
// The table of every setting brokerd knows: broker properties (Kafka's names) and the
// per-topic properties they default. Values are kept as validated strings so that
// DescribeConfigs can report them exactly as Kafka does.
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace brokerd::config {

// password: a string never shown (DescribeConfigs answers it as sensitive, without its value).
enum class PropertyType { boolean, int32, int64, ratio, string, list, choice, password };

struct PropertyDef {
  std::string_view name;
  PropertyType type;
  std::string_view default_value;
  // Inclusive bounds for numbers; ignored for other types.
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  // For `choice` (and each element of a `list` when set): the allowed values, comma separated.
  std::string_view choices = {};
  // The topic-level property this broker property is the default of ("retention.ms"), if any.
  std::string_view topic_name = {};
  bool read_only = true;  // changing it needs a restart
  std::string_view doc = {};
  // No built-in value (Kafka's null default, as log.retention.ms has): unset unless given,
  // and another key decides (log.retention.hours). default_value is then empty.
  bool no_default = false;
};

// Every broker property, in the order config/brokerd.yaml documents them.
std::span<const PropertyDef> broker_properties();
// Every topic-level property (cleanup.policy, retention.ms, ...).
std::span<const PropertyDef> topic_properties();

// Also finds listener-scoped settings (listener.name.<listener>.sasl.enabled.mechanisms, ...).
const PropertyDef* find_broker_property(std::string_view name);
// "sasl.enabled.mechanisms" for "listener.name.sasl_plaintext.sasl.enabled.mechanisms".
std::optional<std::string_view> listener_scoped_suffix(std::string_view name);
const PropertyDef* find_topic_property(std::string_view name);

// Checks a value against its definition; returns an error sentence or nullopt. Lists and
// choices are normalised ("compact, delete" -> "compact,delete") into `normalised`.
std::optional<std::string> validate_value(const PropertyDef& def, std::string_view value,
                                          std::string* normalised = nullptr);

}  // namespace brokerd::config
