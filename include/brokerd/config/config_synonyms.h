#pragma once
// Kafka's config synonyms: the broker keys that set the same thing, highest precedence first
// (log.retention.ms, log.retention.minutes, log.retention.hours), and a listener override
// beside its base key. DescribeConfigs lists them, and a topic default comes from the first
// one set, converted to milliseconds.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace brokerd::config {

struct UnitSynonym {
  std::string_view name;
  int64_t ms_per_unit;  // 1 for milliseconds, 60000 for minutes, 3600000 for hours
};

// The keys that set the same time as `name` (one of them), first the one that wins; empty
// for a key without such synonyms.
std::span<const UnitSynonym> time_synonyms(std::string_view name);

// Every broker key `name` is described with, in Kafka's order: itself and its time synonyms,
// or a listener override and the key it overrides ("listener.name.sasl_ssl.plain.sasl.jaas.config"
// -> itself, "sasl.jaas.config"); just `name` otherwise.
std::vector<std::string> broker_synonyms(std::string_view name);

// The milliseconds a group of time synonyms sets: the first one `value_of` has a value for,
// converted. A negative retention means "keep forever" (-1).
std::optional<int64_t> time_in_ms(std::string_view primary,
                                  const std::function<std::optional<std::string>(std::string_view)>& value_of);

}  // namespace brokerd::config
