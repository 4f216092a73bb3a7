#include "brokerd/metadata/topic_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string_view>

#include "brokerd/common/logger.h"
#include "brokerd/config/properties.h"

namespace brokerd::metadata {

ConfigMap effective_topic_config(const ConfigMap& broker_defaults, const ConfigMap& overrides) {
  ConfigMap out = broker_defaults;
  for (const auto& [k, v] : overrides) out[k] = v;
  return out;
}

namespace {

// Topic configs Kafka 4.0 removed that tools written for 3.x still set: accepted, listed, and
// ignored, with one line in the log per name.
void note_removed_config(std::string_view key) {
  static constexpr std::string_view kRemoved[] = {"message.format.version", "message.downconversion.enable"};
  if (std::find(std::begin(kRemoved), std::end(kRemoved), key) == std::end(kRemoved)) return;
  static std::mutex mu;
  static std::set<std::string, std::less<>> told;
  std::lock_guard lock(mu);
  if (!told.emplace(key).second) return;
  module_logger("metadata")->warn("topic config {} was removed in Kafka 4.0: accepted and ignored", key);
}

}  // namespace

std::pair<protocol::ErrorCode, std::string> validate_topic_configs(ConfigMap& configs) {
  for (auto& [key, value] : configs) {
    const auto* def = config::find_topic_property(key);
    if (!def) return {protocol::ErrorCode::invalid_config, fmt::format("Unknown topic config name: {}", key)};
    note_removed_config(key);
    std::string normalised;
    if (auto err = config::validate_value(*def, value, &normalised))
      return {protocol::ErrorCode::invalid_config, *err};
    value = std::move(normalised);
  }
  return {protocol::ErrorCode::none, {}};
}

}  // namespace brokerd::metadata
